import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ApiError } from '../../infrastructure/http/api-error';
import { ROLES_KEY } from './roles.decorator';
import { StaffAuthenticator } from './staff-authenticator';
import { StaffMember, StaffRole } from './staff-member';

export interface StaffRequest extends Request {
  staff?: StaffMember;
}

/** 401 without a valid bearer token, 403 for a role the route does not allow; admin may call everything. */
@Injectable()
export class StaffAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: StaffAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<StaffRequest>();
    const staff = await this.authenticator.authenticate(request.headers.authorization);
    if (!staff) {
      throw new ApiError(401, 'UNAUTHORIZED', 'A valid staff bearer token is required', undefined, { 'WWW-Authenticate': 'Bearer' });
    }
    const allowed = this.reflector.getAllAndOverride<StaffRole[] | undefined>(ROLES_KEY, [context.getHandler(), context.getClass()]) ?? [];
    if (staff.role !== 'admin' && !allowed.includes(staff.role)) {
      throw new ApiError(403, 'FORBIDDEN', `The ${staff.role} role may not call this route`);
    }
    request.staff = staff;
    return true;
  }
}
