import { Controller, HttpCode, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { formatAmount } from '../../shared/money';
import { EmptyDto, Merchant, MERCHANT_BODY, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { validateBody } from '../../infrastructure/http/dto-body-validator';
import { WalletBalanceReader } from './wallet-balance.reader';
import { DatabaseWait } from '../../infrastructure/http/database-wait.interceptor';

@Controller()
export class BalanceController {
  constructor(
    private readonly wallets: WalletBalanceReader,
    private readonly databaseWait: DatabaseWait,
  ) {}

  @Post(V2_ROUTES.balance)
  @HttpCode(200)
  async balance(@Merchant() request: MerchantRequest) {
    await validateBody(EmptyDto, request.body, MERCHANT_BODY);
    const { merchantId, currency } = request.merchant;
    const { balance, frozen } = await this.databaseWait.repeatAfterOutage(() => this.wallets.amounts(merchantId));
    return successEnvelope('OK', {
      currency,
      balance: formatAmount(balance),
      frozen_balance: formatAmount(frozen),
      available_balance: formatAmount(balance - frozen),
    });
  }
}
