import { SetMetadata } from '@nestjs/common';
import { StaffRole } from './staff-member';

export const ROLES_KEY = 'backOffice:roles';

/**
 * The roles that may call a route, or every route of a controller (a route's
 * own list wins). Admin may always call everything, and a route without the
 * decorator is admin-only: forgetting it fails closed.
 */
export const Roles = (...roles: StaffRole[]) => SetMetadata(ROLES_KEY, roles);
