import { Body, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { approvalOr } from '../approvals/approval-reply';
import { parseAmount } from '../../shared/money';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { BodyPipe } from '../http/back-office-body.pipe';
import { DepositFundsDto } from './deposit-funds.dto';
import { DepositFundsService } from './deposit-funds.service';
import { BACK_OFFICE_ROUTES } from '../routes.public';
import { SafeToRepeat } from '../../infrastructure/http/database-wait.interceptor';

@BackOfficeController()
@Roles()
export class DepositFundsController {
  constructor(private readonly deposits: DepositFundsService) {}

  /** 201 with the wallet; 202 APPROVAL_REQUIRED with the request when the four-eyes rule asks for a second person. */
  @Post(BACK_OFFICE_ROUTES.deposits)
  @SafeToRepeat() // a deposit repeated under its reference changes nothing
  async deposit(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Body(BodyPipe) body: DepositFundsDto,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const amount = parseAmount(body.amount)!; // validated by DepositFundsDto
    const outcome = await this.deposits.deposit(merchantId, body.reference, amount, by.staffId, body.note);
    return approvalOr(response, outcome.approval, () => outcome.wallet);
  }
}
