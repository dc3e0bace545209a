import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { WalletSnapshot } from '../../ledger/commands/wallet-snapshot';
import { ApiError } from '../../infrastructure/http/api-error';
import { formatAmount, Minor } from '../../shared/money';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { DepositFunds } from '../../ledger/commands/deposit-funds/deposit-funds.command';

// Advisory-lock class for deposit references (the two-key form never meets the migration lock).
const DEPOSIT_LOCK_CLASS = 727_002;

@Injectable()
export class DepositFundsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly commands: CommandBus,
  ) {}

  /**
   * The deposit is a FundsDeposited event, which itself records who and when;
   * it cannot share a transaction with a table. So the audit row follows the
   * event: one per deposit however often the request is repeated (the
   * reference's lock serialises identical requests), and written only once
   * the money has moved. A crash between the two leaves a deposit without its
   * audit row until the same request is repeated, never an audit row without
   * a deposit. No transaction is held across the append: it would hold a
   * pooled connection while the append waits for another one.
   */
  async deposit(merchantId: string, reference: string, amount: Minor, staffId: string): Promise<DepositView> {
    const { rows } = await this.pool.query<{ currency: string }>('select currency from merchants where merchant_id = $1', [merchantId]);
    if (rows.length === 0) throw new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);
    const wallet = await this.commands.execute(new DepositFunds(merchantId, reference, amount, staffId));
    const target = `merchant:${merchantId}`;
    await inTransaction(this.pool, async (client) => {
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [DEPOSIT_LOCK_CLASS, `${merchantId}\n${reference}`]);
      const { rowCount } = await client.query(
        `select 1 from back_office_audit where target = $1 and action = 'wallet.deposited' and details->>'reference' = $2`,
        [target, reference],
      );
      if (rowCount === 0) {
        await recordAudit(client, { staffId, action: 'wallet.deposited', target, details: { reference, amount: formatAmount(amount) } });
      }
    });
    return walletView(wallet, rows[0].currency);
  }
}

/** The wallet right after a deposit. */
export interface DepositView {
  merchant_id: string;
  currency: string;
  balance: string;
  frozen_balance: string;
  available_balance: string;
}

function walletView(wallet: WalletSnapshot, currency: string): DepositView {
  return {
    merchant_id: wallet.merchantId,
    currency,
    balance: formatAmount(wallet.balance),
    frozen_balance: formatAmount(wallet.frozen),
    available_balance: formatAmount(wallet.available),
  };
}
