import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { WalletSnapshot } from '../../ledger/commands/wallet-snapshot';
import { ApiError } from '../../infrastructure/http/api-error';
import { formatAmount, Minor } from '../../shared/money';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { DepositFunds } from '../../ledger/commands/deposit-funds/deposit-funds.command';
import { ApprovalGate, ApprovalParties } from '../approvals/approval-gate';
import type { ApprovalView } from '../approvals/approval.view';
import { payloadAmount, payloadText } from '../approvals/approval-payload';

// Advisory-lock class for deposit references (the two-key form never meets the migration lock).
const DEPOSIT_LOCK_CLASS = 727_002;

/** A deposit made, or the request for one that waits for a second person. */
export type DepositOutcome = { wallet: DepositView; approval?: undefined } | { approval: ApprovalView; wallet?: undefined };

@Injectable()
export class DepositFundsService implements OnModuleInit {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly commands: CommandBus,
    private readonly approvals: ApprovalGate,
  ) {}

  onModuleInit(): void {
    this.approvals.registerExecutor('deposit', (payload, who) => this.carryOut(payload, who));
  }

  /**
   * Over APPROVAL_THRESHOLD, the deposit becomes a request that another
   * administrator approves (key: the reference, so the same deposit asked
   * again while it waits is the same request). Once approved, the same
   * deposit again changes nothing, as it always has.
   */
  async deposit(merchantId: string, reference: string, amount: Minor, staffId: string, note?: string): Promise<DepositOutcome> {
    const currency = await this.currencyOf(merchantId);
    if (this.approvals.needsApproval([{ currency, amount }])) {
      const approval = await this.approvals.request({
        kind: 'deposit',
        summary: `Deposit ${formatAmount(amount)} ${currency}, reference ${reference}`,
        merchantId,
        amounts: [{ currency, amount }],
        payload: { merchant_id: merchantId, reference, amount: formatAmount(amount) },
        requestedBy: staffId,
        note: note ?? '',
        key: `${merchantId}\n${reference}`,
      });
      if (approval.status === 'pending') return { approval };
    }
    return { wallet: await this.depositNow(merchantId, currency, reference, amount, staffId) };
  }

  /** The approved deposit: the same command, with its approver. */
  private async carryOut(payload: Record<string, unknown>, { requestedBy, approvedBy }: ApprovalParties): Promise<Record<string, unknown>> {
    const merchantId = payloadText(payload, 'merchant_id');
    const wallet = await this.depositNow(
      merchantId,
      await this.currencyOf(merchantId),
      payloadText(payload, 'reference'),
      payloadAmount(payload, 'amount'),
      requestedBy,
      approvedBy,
    );
    return { ...wallet };
  }

  private async currencyOf(merchantId: string): Promise<string> {
    const { rows } = await this.pool.query<{ currency: string }>('select currency from merchants where merchant_id = $1', [merchantId]);
    if (rows.length === 0) throw new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);
    return rows[0].currency;
  }

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
  private async depositNow(merchantId: string, currency: string, reference: string, amount: Minor, staffId: string, approvedBy?: string): Promise<DepositView> {
    const wallet = await this.commands.execute(new DepositFunds(merchantId, reference, amount, staffId, approvedBy));
    const target = `merchant:${merchantId}`;
    await inTransaction(this.pool, async (client) => {
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [DEPOSIT_LOCK_CLASS, `${merchantId}\n${reference}`]);
      const { rowCount } = await client.query(
        `select 1 from back_office_audit where target = $1 and action = 'wallet.deposited' and details->>'reference' = $2`,
        [target, reference],
      );
      if (rowCount === 0) {
        const details = { reference, amount: formatAmount(amount), ...(approvedBy === undefined ? {} : { approved_by: approvedBy }) };
        await recordAudit(client, { staffId, action: 'wallet.deposited', target, details });
      }
    });
    return walletView(wallet, currency);
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

export function walletView(wallet: WalletSnapshot, currency: string): DepositView {
  return {
    merchant_id: wallet.merchantId,
    currency,
    balance: formatAmount(wallet.balance),
    frozen_balance: formatAmount(wallet.frozen),
    available_balance: formatAmount(wallet.available),
  };
}
