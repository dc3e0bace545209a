import { Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore } from '../../ledger/ports/event-store.port';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { decodeEvent } from '../../ledger/event-codec';
import { walletStream } from '../../ledger/streams';
import { WalletEvent, walletMovement } from '../../ledger/wallet/wallet.decider';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { formatAmount } from '../../shared/money';
import { Merchant, MERCHANT_BODY, MerchantRequest } from '../gateway/merchant-request';
import { V2_ROUTES } from '../routes.public';
import { EmptyDto } from '../orders/order.dto';
import { validateBody } from '../../infrastructure/http/validate-body';

@Controller()
export class BalanceController {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Post(V2_ROUTES.balance)
  @HttpCode(200)
  async balance(@Merchant() request: MerchantRequest) {
    await validateBody(EmptyDto, request.body, MERCHANT_BODY);
    const { merchantId, currency } = request.merchant;
    // The read model as far as it goes, then the wallet's newer events: a
    // balance read straight after a 202 already shows that order's freeze.
    const { rows } = await this.pool.query<{ balance: string; frozen: string; revision: string }>(
      'select balance::text, frozen::text, revision::text from rm_wallets where merchant_id = $1',
      [merchantId],
    );
    let balance = BigInt(rows[0]?.balance ?? 0);
    let frozen = BigInt(rows[0]?.frozen ?? 0);
    const tail = await this.store.readStream(walletStream(merchantId), rows[0] ? BigInt(rows[0].revision) + 1n : 0n);
    for (const recorded of tail) {
      const movement = walletMovement(decodeEvent<WalletEvent>(recorded));
      balance += movement.balance;
      frozen += movement.frozen;
    }
    return successEnvelope('OK', {
      currency,
      balance: formatAmount(balance),
      frozen_balance: formatAmount(frozen),
      available_balance: formatAmount(balance - frozen),
    });
  }
}
