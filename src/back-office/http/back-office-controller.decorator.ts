import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { StaffAuthGuard } from '../auth/staff-auth.guard';
import { BACK_OFFICE_PREFIX } from '../routes.public';
import { JsonBodyInterceptor } from './json-body.interceptor';

/**
 * A controller under the back office's prefix (/admin/v1), its routes from
 * BACK_OFFICE_ROUTES: staff authentication and role check first,
 * then the JSON body. Every back-office controller uses it, so no route can
 * forget the guard.
 */
export const BackOfficeController = () => applyDecorators(Controller(BACK_OFFICE_PREFIX), UseGuards(StaffAuthGuard), UseInterceptors(JsonBodyInterceptor));
