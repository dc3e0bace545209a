import { Command } from '@nestjs/cqrs';
import { Minor } from '../../shared/money';
import { DeliveryFailCode, OrderState } from '../order/order.decider';
import { SubmitOrderInput, SubmitOrderResult } from '../order/order-workflow';

export interface WalletSnapshot {
  merchantId: string;
  balance: Minor;
  frozen: Minor;
  available: Minor;
}

export class OpenWallet extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly currency: string,
  ) {
    super();
  }
}

/** Idempotent on its reference: the same deposit again changes nothing. */
export class DepositFunds extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly reference: string,
    readonly amount: Minor,
    readonly depositedBy: string,
  ) {
    super();
  }
}

/** Idempotent on (merchant, out_trade_no): see OrderWorkflow.submit. */
export class SubmitOrder extends Command<SubmitOrderResult> {
  constructor(readonly input: SubmitOrderInput) {
    super();
  }
}

/** The upstream delivered: deduct the frozen amount, the order succeeds. */
export class SettleOrder extends Command<OrderState> {
  constructor(readonly orderNo: string) {
    super();
  }
}

/** The upstream definitively refused: release the frozen amount, the order fails. */
export class ReleaseFunds extends Command<OrderState> {
  constructor(
    readonly orderNo: string,
    readonly failCode: DeliveryFailCode,
    readonly failReason: string,
  ) {
    super();
  }
}

/** The upstream result is unknown: funds stay frozen until staff resolve it. */
export class MarkResultUnknown extends Command<OrderState> {
  constructor(
    readonly orderNo: string,
    readonly reason: string,
    /** What the upstream said or did, for reconciliation staff. */
    readonly evidence?: string,
  ) {
    super();
  }
}

/** Reconciliation staff settle an unknown-result order. */
export class ResolveOrder extends Command<OrderState> {
  constructor(
    readonly orderNo: string,
    readonly outcome: 'success' | 'failed',
    readonly staffId: string,
    readonly note: string,
  ) {
    super();
  }
}

/** Records that the order is being sent to the upstream (one event per attempt). */
export class RecordUpstreamAttempt extends Command<OrderState> {
  constructor(readonly orderNo: string) {
    super();
  }
}
