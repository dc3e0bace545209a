import { Controller, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { Merchant, MerchantBody, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { SubmitOrderDto } from './submit-order.dto';
import { SubmitOrderService } from './submit-order.service';
import { DatabaseWait } from '../../infrastructure/http/database-wait.interceptor';

@Controller()
export class SubmitOrderController {
  constructor(
    private readonly submissions: SubmitOrderService,
    private readonly databaseWait: DatabaseWait,
  ) {}

  @Post(V2_ROUTES.submit)
  async submit(@Merchant() request: MerchantRequest, @MerchantBody() dto: SubmitOrderDto, @Res({ passthrough: true }) response: Response) {
    // Safe to repeat after a lost database answer: a second run finds the order the first placed (DUPLICATE).
    const { outcome, order } = await this.databaseWait.repeatAfterOutage(() => this.submissions.submit(request.merchant, dto, request.catalogueRevision));
    response.status(outcome === 'accepted' ? 202 : 200);
    return successEnvelope(outcome === 'accepted' ? 'ACCEPTED' : 'DUPLICATE', order);
  }
}
