import { Get } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { DashboardReader } from './dashboard.reader';
import { QueryString, QueryValues } from '../http/query-string';
import { DASHBOARD_QUERY } from './dashboard-window';

/** How the service has been doing over the last hour or day, for operators (admin): see DashboardReader. */
@BackOfficeController()
@Roles()
export class DashboardController {
  constructor(private readonly dashboard: DashboardReader) {}

  @Get(BACK_OFFICE_ROUTES.operationsDashboard)
  async read(@QueryString(DASHBOARD_QUERY) q: QueryValues<typeof DASHBOARD_QUERY>) {
    return successEnvelope('OK', await this.dashboard.read(q.window ?? '1h'));
  }
}
