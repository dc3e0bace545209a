import { LedgerEvent } from '../../projections/ledger-event';
import { OrderEvent } from '../../src/ledger/order/order.decider';
import { orderStream } from '../../src/ledger/streams';
import { recordedLedgerEvent } from './projection-cases';

/*
 * Orders' lives as the order stream records them, for the projections'
 * batch tests: one spec per event, interleaved into a log as concurrent
 * orders are.
 */

export type OrderSpec = { orderNo: string; event: OrderEvent };
export const order = (orderNo: string, event: OrderEvent): OrderSpec => ({ orderNo, event });
export const placed = (orderNo: string, attempt: number, at: string): OrderSpec =>
  order(orderNo, {
    type: 'OrderPlaced',
    data: {
      orderNo,
      merchantId: 'mch_1',
      outTradeNo: `OUT-${orderNo}`,
      skuId: `sku-${attempt}`,
      accountId: `acc-${attempt}`,
      accountFields: { server_id: String(attempt) },
      amount: 1000n * BigInt(attempt),
      currency: 'USD',
      attempt,
      at,
    },
  });

/** Every order's life the service can write, each event a second apart. */
export const at = (s: number) => `2026-11-25T10:00:${String(s).padStart(2, '0')}.000+00:00`;

export function orderLives(): OrderSpec[][] {
  return [
    [placed('A', 1, at(0)), order('A', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } })],
    [
      placed('B', 1, at(0)),
      order('B', { type: 'OrderRefused', data: { attempt: 1, code: 'INSUFFICIENT_BALANCE', at: at(1) } }),
      placed('B', 2, at(2)),
      order('B', { type: 'OrderAccepted', data: { attempt: 2, at: at(3) } }),
      order('B', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(4) } }),
      order('B', { type: 'OrderDeliveryConfirmed', data: { at: at(5) } }),
      order('B', { type: 'OrderSucceeded', data: { at: at(6) } }),
    ],
    [
      placed('C', 1, at(0)),
      order('C', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
      order('C', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
      order('C', { type: 'OrderDeliveryFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: 'no such player', at: at(3) } }),
      order('C', { type: 'OrderFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: 'no such player', at: at(4) } }),
    ],
    [
      placed('D', 1, at(0)),
      order('D', { type: 'OrderAccepted', data: { attempt: 1, at: at(1) } }),
      order('D', { type: 'OrderSentUpstream', data: { upstreamAttempt: 1, at: at(2) } }),
      order('D', { type: 'OrderResultUnknown', data: { reason: 'timeout', evidence: 'no reply in 10 s', at: at(3) } }),
      order('D', { type: 'OrderResolved', data: { outcome: 'failed', resolvedBy: 'clerk-1', note: 'provider says never delivered', at: at(4) } }),
      order('D', { type: 'OrderFailed', data: { failCode: 'RESOLVED_FAILED', failReason: 'provider says never delivered', at: at(5) } }),
    ],
    [placed('E', 1, at(0)), order('E', { type: 'OrderRefused', data: { attempt: 1, code: 'INSUFFICIENT_BALANCE', at: at(1) } })],
  ];
}

/**
 * The orders' events interleaved, as the log holds concurrent orders: each
 * recorded (encoded, at the next position) and decoded as the runner does.
 */
export function interleaved(lives: OrderSpec[][] = orderLives()): LedgerEvent[] {
  const queues = lives.map((life) => [...life]);
  const log: LedgerEvent[] = [];
  while (queues.some((q) => q.length > 0)) {
    for (const q of queues) {
      const next = q.shift();
      if (!next) continue;
      log.push(recordedLedgerEvent(orderStream(next.orderNo), 0n, { commit: 1n, prepare: BigInt(log.length + 1) }, next.event));
    }
  }
  return log;
}
