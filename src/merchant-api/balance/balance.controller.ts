import { Controller, HttpCode, Post } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { formatAmount } from '../../shared/money';
import { EmptyDto, Merchant, MerchantBody, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { WalletBalanceReader } from './wallet-balance.reader';
import { DatabaseWait } from '../../infrastructure/http/database-wait.interceptor';

@Controller()
export class BalanceController {
  constructor(
    private readonly wallets: WalletBalanceReader,
    private readonly databaseWait: DatabaseWait,
  ) {}

  /** The body must be {}: the parameter is there for its check. */
  @Post(V2_ROUTES.balance)
  @HttpCode(200)
  async balance(@Merchant() request: MerchantRequest, @MerchantBody() _body: EmptyDto) {
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
