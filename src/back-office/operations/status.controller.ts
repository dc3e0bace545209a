import { Get } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { StatusReader } from './status.reader';
import { BACK_OFFICE_ROUTES } from '../routes.public';

/** The service's state at a glance, for any staff member (see StatusReader). */
@BackOfficeController()
@Roles()
export class StatusController {
  constructor(private readonly status: StatusReader) {}

  @Get(BACK_OFFICE_ROUTES.status)
  async current() {
    return successEnvelope('OK', await this.status.current());
  }
}
