import { applyDecorators, Controller, UseGuards, UseInterceptors } from '@nestjs/common';
import { DatabaseWaitInterceptor } from '../../infrastructure/http/database-wait.interceptor';
import { StaffAuthGuard } from '../auth/staff-auth.guard';
import { BACK_OFFICE_PREFIX } from '../routes.public';
import { JsonBodyInterceptor } from './json-body.interceptor';
import { QueryStringInterceptor } from './query-string';

/**
 * A controller under the back office's prefix (/admin/v1), its routes from
 * BACK_OFFICE_ROUTES: staff authentication and role check first,
 * then the JSON body, then the query string, then the handler, run again
 * after a lost database answer when it is safe to repeat (DatabaseWaitInterceptor).
 * Every back-office controller
 * uses it, so no route can forget the guard, and a route that takes no query
 * parameters refuses them all the same.
 */
export const BackOfficeController = () =>
  applyDecorators(
    Controller(BACK_OFFICE_PREFIX),
    UseGuards(StaffAuthGuard),
    UseInterceptors(JsonBodyInterceptor, QueryStringInterceptor, DatabaseWaitInterceptor),
  );
