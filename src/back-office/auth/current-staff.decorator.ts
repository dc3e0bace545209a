import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { StaffMember } from './staff-member';
import type { StaffRequest } from './staff-auth.guard';

/** The staff member the guard authenticated. */
export const CurrentStaff = createParamDecorator((_data: unknown, context: ExecutionContext): StaffMember => {
  const staff = context.switchToHttp().getRequest<StaffRequest>().staff;
  if (!staff) throw new Error('CurrentStaff used on a route without StaffAuthGuard');
  return staff;
});
