import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { StaffAuthGuard } from '../auth/staff-auth.guard';
import { adminPath, BACK_OFFICE_PREFIX } from '../routes.public';
import { JsonBodyInterceptor } from './json-body.interceptor';

/**
 * A controller under the back office's prefix (/admin/v1): staff authentication and role check first,
 * then the JSON body. Every back-office controller uses it, so no route can
 * forget the guard.
 */
export const BackOfficeController = (path = '') =>
  applyDecorators(Controller(path ? adminPath(path) : BACK_OFFICE_PREFIX), UseGuards(StaffAuthGuard), UseInterceptors(JsonBodyInterceptor));
