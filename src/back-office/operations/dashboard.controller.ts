import { Get, Query } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { DashboardReader } from './dashboard.reader';
import { dashboardWindow } from './dashboard-window';

/** How the service has been doing over the last hour or day, for operators (admin): see DashboardReader. */
@BackOfficeController()
@Roles()
export class DashboardController {
  constructor(private readonly dashboard: DashboardReader) {}

  @Get(BACK_OFFICE_ROUTES.operationsDashboard)
  async read(@Query() query: Record<string, unknown>) {
    return successEnvelope('OK', await this.dashboard.read(dashboardWindow(query)));
  }
}
