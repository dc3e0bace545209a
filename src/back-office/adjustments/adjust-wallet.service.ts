import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { ApiError } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { loadAggregate } from '../../ledger/command-handling';
import { AdjustWallet } from '../../ledger/commands/adjust-wallet/adjust-wallet.command';
import { isFinal, orderDecider } from '../../ledger/order/order.decider';
import { EVENT_STORE, EventStore } from '../../ledger/ports/event-store.port';
import { orderStream } from '../../ledger/streams';
import { WalletAdjustment } from '../../ledger/wallet/wallet.decider';
import { formatAmount } from '../../shared/money';
import { ApprovalGate, ApprovalParties } from '../approvals/approval-gate';
import type { ApprovalView } from '../approvals/approval.view';
import { optionalPayloadText, payloadAmount, payloadChoice, payloadText } from '../approvals/approval-payload';
import { DisplayNames } from '../display-names/display-names';
import { walletView } from '../merchants/deposit-funds.service';
import { recordAudit } from '../staff-audit-trail/audit-trail';
import { AdjustedWalletView } from './adjustment.view';

// Advisory-lock class for adjustment references, beside the deposits' (727_002).
const ADJUSTMENT_LOCK_CLASS = 727_003;

export type AdjustmentOutcome = { adjusted: AdjustedWalletView; approval?: undefined } | { approval: ApprovalView; adjusted?: undefined };

/**
 * Corrections of a wallet's balance by staff: a credit or a debit with a
 * reason code, usually for a final order that the upstream's own report
 * contradicts (the order stays final; the money is put right beside it).
 * Behind the four-eyes rule like every manual movement: a reconciler asks,
 * an admin approves.
 */
@Injectable()
export class AdjustWalletService implements OnModuleInit {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly commands: CommandBus,
    private readonly approvals: ApprovalGate,
    private readonly names: DisplayNames,
  ) {}

  onModuleInit(): void {
    this.approvals.registerExecutor('adjustment', (payload, who) => this.carryOut(payload, who));
  }

  async adjust(merchantId: string, adjustment: WalletAdjustment, staffId: string): Promise<AdjustmentOutcome> {
    const currency = await this.currencyOf(merchantId);
    if (adjustment.orderNo !== undefined) await this.checkOrder(merchantId, adjustment.orderNo);
    const amounts = [{ currency, amount: adjustment.amount }];
    if (this.approvals.needsApproval(amounts)) {
      const { direction, amount, reason, orderNo, reference } = adjustment;
      const approval = await this.approvals.request({
        kind: 'adjustment',
        summary: `${direction === 'credit' ? 'Credit' : 'Debit'} ${formatAmount(amount)} ${currency} for ${reason}${orderNo === undefined ? '' : ` on order ${orderNo}`}`,
        merchantId,
        amounts,
        payload: {
          merchant_id: merchantId,
          reference,
          direction,
          amount: formatAmount(amount),
          reason,
          note: adjustment.note,
          ...(orderNo === undefined ? {} : { order_no: orderNo }),
        },
        requestedBy: staffId,
        note: adjustment.note,
        key: `${merchantId}\n${reference}`,
      });
      // Approved already: carried out, so the same adjustment again changes nothing (another one under its reference is refused).
      if (approval.status === 'pending') return { approval };
    }
    return { adjusted: await this.adjustNow(merchantId, currency, adjustment, staffId) };
  }

  /** The approved adjustment: the same command, with its approver. The reference makes a second run change nothing. */
  private async carryOut(payload: Record<string, unknown>, { requestedBy, approvedBy }: ApprovalParties): Promise<Record<string, unknown>> {
    const merchantId = payloadText(payload, 'merchant_id');
    const orderNo = optionalPayloadText(payload, 'order_no');
    const adjustment: WalletAdjustment = {
      reference: payloadText(payload, 'reference'),
      direction: payloadChoice(payload, 'direction', ['credit', 'debit'] as const),
      amount: payloadAmount(payload, 'amount'),
      reason: payloadText(payload, 'reason'),
      note: payloadText(payload, 'note'),
      ...(orderNo === undefined ? {} : { orderNo }),
    };
    return { ...(await this.adjustNow(merchantId, await this.currencyOf(merchantId), adjustment, requestedBy, approvedBy)) };
  }

  /**
   * The WalletAdjusted event records who and when; the audit row follows it,
   * once per reference however often the request comes (as deposits do).
   */
  private async adjustNow(
    merchantId: string,
    currency: string,
    adjustment: WalletAdjustment,
    staffId: string,
    approvedBy?: string,
  ): Promise<AdjustedWalletView> {
    const wallet = await this.commands.execute(new AdjustWallet(merchantId, adjustment, staffId, approvedBy));
    const { reference, direction, amount, reason, note, orderNo } = adjustment;
    const target = `merchant:${merchantId}`;
    await inTransaction(this.pool, async (client) => {
      await client.query('select pg_advisory_xact_lock($1, hashtext($2))', [ADJUSTMENT_LOCK_CLASS, `${merchantId}\n${reference}`]);
      const { rowCount } = await client.query(
        `select 1 from back_office_audit where target = $1 and action = 'wallet.adjusted' and details->>'reference' = $2`,
        [target, reference],
      );
      if (rowCount === 0) {
        const details = {
          reference,
          direction,
          amount: formatAmount(amount),
          reason,
          note,
          order_no: orderNo ?? null,
          ...(approvedBy === undefined ? {} : { approved_by: approvedBy }),
        };
        await recordAudit(client, { staffId, action: 'wallet.adjusted', target, details });
      }
    });
    const names = await this.names.of({ staff: [staffId, approvedBy ?? null] });
    return {
      wallet: walletView(wallet, currency),
      adjustment: {
        reference,
        direction,
        amount: formatAmount(amount),
        currency,
        reason,
        note,
        order_no: orderNo ?? null,
        adjusted_by: staffId,
        adjusted_by_name: names.staff(staffId),
        approved_by: approvedBy ?? null,
        approved_by_name: names.staff(approvedBy ?? null),
      },
    };
  }

  private async currencyOf(merchantId: string): Promise<string> {
    const { rows } = await this.pool.query<{ currency: string }>('select currency from merchants where merchant_id = $1', [merchantId]);
    if (rows.length === 0) throw new ApiError(404, 'MERCHANT_NOT_FOUND', `No merchant ${merchantId}`);
    return rows[0].currency;
  }

  /** An adjustment corrects a final order of this wallet's merchant; an order in flight is resolved, not adjusted. */
  private async checkOrder(merchantId: string, orderNo: string): Promise<void> {
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    // A refused submit never became an order.
    if (state.stage === 'none' || state.stage === 'refused') throw new ApiError(404, 'ORDER_NOT_FOUND', `No order ${orderNo}`, 'order_no');
    if (state.order.merchantId !== merchantId) {
      throw new ApiError(422, 'ORDER_OF_ANOTHER_MERCHANT', `Order ${orderNo} is not an order of merchant ${merchantId}`, 'order_no');
    }
    if (!isFinal(state))
      throw new ApiError(409, 'ORDER_NOT_FINAL', `Order ${orderNo} is ${state.stage}: only a final order is corrected by an adjustment`, 'order_no');
  }
}
