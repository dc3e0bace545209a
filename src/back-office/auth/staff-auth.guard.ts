import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../../config/config';
import { ApiError } from '../../infrastructure/http/api-error';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { untilDatabaseAnswers } from '../../infrastructure/postgres/database-wait';
import { ConsoleSessions } from './console-sessions';
import { ROLES_KEY } from './roles.decorator';
import { CSRF_HEADER, sessionCookie } from './session-cookie';
import { StaffAuthenticator } from './staff-authenticator';
import { StaffMember, StaffRole } from './staff-member';

export interface StaffRequest extends Request {
  staff?: StaffMember;
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * 401 without a valid bearer token or console session, 403 for a role the
 * route does not allow; admin may call everything. A console session (a
 * cookie the browser sends by itself) must also show the session's CSRF
 * token in a header for anything but a read: a page on another site can make
 * the browser send the cookie, never read the token.
 */
@Injectable()
export class StaffAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: StaffAuthenticator,
    private readonly sessions: ConsoleSessions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<StaffRequest>();
    // Reads: waited through a failover like the route's own (DatabaseWaitInterceptor runs after guards).
    const staff = await untilDatabaseAnswers(() => this.authenticate(request), { waitMs: this.config.databaseWaitMs });
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

  /** A bearer token wins over a cookie: scripts and curl never depend on a browser's state. */
  private async authenticate(request: Request): Promise<StaffMember | undefined> {
    if (request.headers.authorization !== undefined) return this.authenticator.authenticate(request.headers.authorization);
    const cookie = sessionCookie(request);
    const session = cookie === undefined ? undefined : await this.sessions.find(cookie);
    if (!session) return undefined;
    if (!SAFE_METHODS.has(request.method) && !sameToken(request.headers[CSRF_HEADER], session.csrfToken)) {
      throw new ApiError(403, 'CSRF_TOKEN_INVALID', `A change made with a console session needs the session's CSRF token in the ${CSRF_HEADER} header`);
    }
    return session.staff;
  }
}

function sameToken(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}
