import { Body, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { approvalOr } from '../approvals/approval-reply';
import { parseAmount } from '../../shared/money';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BodyPipe } from '../http/back-office-body.pipe';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { AdjustWalletDto } from './adjust-wallet.dto';
import { AdjustWalletService } from './adjust-wallet.service';
import { SafeToRepeat } from '../../infrastructure/http/database-wait.interceptor';

/** A credit or a debit by staff outside any order's hold: a new wallet event, on the statement and in the hash chain. */
@BackOfficeController()
@Roles('reconciler')
export class AdjustWalletController {
  constructor(private readonly adjustments: AdjustWalletService) {}

  /** 201 with the wallet and the adjustment; 202 APPROVAL_REQUIRED with the request when the four-eyes rule asks for a second person. */
  @Post(BACK_OFFICE_ROUTES.adjustments)
  @SafeToRepeat() // an adjustment repeated under its reference changes nothing
  async adjust(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Body(BodyPipe) body: AdjustWalletDto,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const adjustment = {
      reference: body.reference,
      direction: body.direction,
      amount: parseAmount(body.amount)!, // validated by AdjustWalletDto
      reason: body.reason,
      note: body.note,
      ...(body.order_no === undefined ? {} : { orderNo: body.order_no }),
    };
    const outcome = await this.adjustments.adjust(merchantId, adjustment, by.staffId);
    return approvalOr(response, outcome.approval, () => outcome.adjusted);
  }
}
