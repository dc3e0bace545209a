import { Body, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { approvalOr } from '../approvals/approval-reply';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BodyPipe } from '../http/back-office-body.pipe';
import { OrderDetailReader } from './order-detail.reader';
import { ResolveOrderDto } from './resolve-order.dto';
import { ResolveOrderService } from './resolve-order.service';
import { BACK_OFFICE_ROUTES } from '../routes.public';

/** A person settles an order whose upstream result is unknown: it then settles or releases exactly like an upstream outcome. */
@BackOfficeController()
@Roles('reconciler')
export class ResolveOrderController {
  constructor(
    private readonly resolutions: ResolveOrderService,
    private readonly orders: OrderDetailReader,
  ) {}

  /** 200 with the order as resolved; 202 APPROVAL_REQUIRED with the request when the four-eyes rule asks for a second person. */
  @Post(BACK_OFFICE_ROUTES.resolveOrder)
  @HttpCode(200)
  async resolve(
    @Param(PathIdsPipe) { order_no: orderNo }: PathIds,
    @Body(BodyPipe) body: ResolveOrderDto,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const { approval } = await this.resolutions.resolve(orderNo, body.outcome, body.note, by.staffId);
    return approvalOr(response, approval, () => this.orders.detail(orderNo));
  }
}
