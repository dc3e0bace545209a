import { Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore } from '../../infrastructure/event-store/event-store.port';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { loadAggregate } from '../../ledger/command-handling';
import { walletStream } from '../../ledger/streams';
import { walletDecider } from '../../ledger/wallet/wallet.decider';
import { successEnvelope } from '../../shared/http/api-error';
import { formatAmount } from '../../shared/money';
import { Merchant, MerchantRequest } from '../gateway/merchant-request';
import { EmptyDto } from '../orders/order.dto';
import { validateBody } from '../validation/validate-body';

@Controller()
export class BalanceController {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post('api/v2/balance')
  @HttpCode(200)
  async balance(@Merchant() request: MerchantRequest) {
    await validateBody(EmptyDto, request.body, []);
    const { merchantId, currency } = request.merchant;
    const { rows } = await this.pool.query<{ balance: string; frozen: string }>(
      'select balance::text, frozen::text from rm_wallets where merchant_id = $1',
      [merchantId],
    );
    let balance: bigint;
    let frozen: bigint;
    if (rows[0]) {
      balance = BigInt(rows[0].balance);
      frozen = BigInt(rows[0].frozen);
    } else {
      // Not projected yet (a brand-new merchant): the wallet's stream is the truth.
      ({ balance, frozen } = (await loadAggregate(this.store, walletStream(merchantId), walletDecider)).state);
    }
    return successEnvelope('OK', {
      currency,
      balance: formatAmount(balance),
      frozen_balance: formatAmount(frozen),
      available_balance: formatAmount(balance - frozen),
    });
  }
}
