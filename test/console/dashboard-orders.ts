import { RunningService } from '../support/service';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';

/** How many orders of each outcome to put through the service. */
export interface OrderMix {
  success: number;
  failed: number;
  unknown: number;
}

/** Where each outcome stops: the simulator refuses accounts ending 000 and never answers those ending 999. */
const ENDING = { success: '123', failed: '000', unknown: '999' } as const;
const SETTLED = { success: 'succeeded', failed: 'failed', unknown: 'unknown' } as const;

let seq = 0;

/**
 * Submits real orders with fulfilment on through the built-in simulator, and
 * waits until each has reached its outcome in the orders read model: the
 * figures the operations dashboard then shows come from the service's own
 * events, not from rows written by the test.
 */
export async function submitOrderMix(service: RunningService, merchant: TestMerchant, mix: OrderMix, prefix: string, timeoutMs = 30_000) {
  const placed: { orderNo: string; outcome: keyof OrderMix }[] = [];
  for (const outcome of ['success', 'failed', 'unknown'] as const) {
    for (let i = 0; i < mix[outcome]; i++) {
      const reply = await signedFetch(service, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({
          out_trade_no: `${prefix}-${++seq}`,
          sku_id: 'mlbb-86',
          account_id: `5${seq}${ENDING[outcome]}`,
          account_fields: { server_id: '7' },
        }),
      });
      if (reply.status !== 202) throw new Error(`submit: ${reply.status} ${JSON.stringify(reply.body)}`);
      placed.push({ orderNo: reply.body.data.order_no as string, outcome });
    }
  }
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await service.pool.query<{ order_no: string; stage: string }>('select order_no, stage from rm_orders where order_no = any($1)', [
      placed.map((p) => p.orderNo),
    ]);
    const stages = new Map(rows.map((r) => [r.order_no, r.stage]));
    const waiting = placed.filter((p) => stages.get(p.orderNo) !== SETTLED[p.outcome]);
    if (waiting.length === 0) return placed;
    if (Date.now() > end)
      throw new Error(`orders not settled: ${waiting.map((p) => `${p.orderNo} ${stages.get(p.orderNo)} (expected ${p.outcome})`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
