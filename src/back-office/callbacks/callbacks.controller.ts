import { Get, HttpCode, Param, Post } from '@nestjs/common';
import { CallbackLog } from '../../callbacks';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { AuditTrail } from '../staff-audit-trail/audit-trail';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const notFinal = (orderNo: string) => new ApiError(404, 'CALLBACK_NOT_FOUND', `Order ${orderNo} has no callback: it does not exist or is not final yet`);

/** An order's callback delivery log, and manual redelivery. */
@BackOfficeController()
@Roles('reconciler')
export class CallbacksController {
  constructor(
    private readonly log: CallbackLog,
    private readonly audit: AuditTrail,
  ) {}

  @Get(BACK_OFFICE_ROUTES.orderCallbacks)
  async deliveries(@Param(PathIdsPipe) { order_no: orderNo }: PathIds) {
    const log = await this.log.of(orderNo);
    if (!log) throw notFinal(orderNo);
    return successEnvelope('OK', log);
  }

  @Post(BACK_OFFICE_ROUTES.redeliverCallback)
  @HttpCode(202)
  async redeliver(@Param(PathIdsPipe) { order_no: orderNo }: PathIds, @CurrentStaff() by: StaffMember) {
    if (!(await this.log.redeliver(orderNo))) throw notFinal(orderNo);
    await this.audit.record({ staffId: by.staffId, action: 'callback.redelivery_requested', target: `order:${orderNo}`, details: {} });
    return successEnvelope('OK', await this.log.of(orderNo));
  }
}
