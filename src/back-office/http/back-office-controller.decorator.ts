import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { StaffAuthGuard } from '../auth/staff-auth.guard';
import { JsonBodyInterceptor } from './json-body.interceptor';

/**
 * A controller under /admin/v1: staff authentication and role check first,
 * then the JSON body. Every back-office controller uses it, so no route can
 * forget the guard.
 */
export const BackOfficeController = (path = '') =>
  applyDecorators(Controller(`admin/v1${path ? `/${path}` : ''}`), UseGuards(StaffAuthGuard), UseInterceptors(JsonBodyInterceptor));
