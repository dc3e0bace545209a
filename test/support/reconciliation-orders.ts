import { FulfilmentWorker } from '../../src/fulfilment/worker/fulfilment-worker';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { RecordUpstreamAttempt } from '../../src/ledger/commands/record-upstream-attempt/record-upstream-attempt.command';
import { signedFetch, TestMerchant } from './merchant-fixture';
import { RunningService } from './service';
import { until } from './until';

/**
 * Orders in the stages bulk reconciliation deals with, made through the
 * merchant API and the real upstream path wherever one exists.
 */

let seq = 0;

/** Submits a top-up of SKU mlbb-86 (1.20) for the account; the order number. */
export async function submitOrder(service: RunningService, merchant: TestMerchant, accountId: string): Promise<string> {
  const reply = await signedFetch(service, merchant, {
    path: '/api/v2/topup/submit',
    body: JSON.stringify({ out_trade_no: `BR-${process.pid}-${++seq}`, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '9' } }),
  });
  if (reply.status !== 202) throw new Error(`submit: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.data.order_no as string;
}

/** The stage of each order in the orders read model. */
export async function stagesOf(service: RunningService, orderNos: readonly string[]): Promise<Map<string, string>> {
  const { rows } = await service.pool.query<{ order_no: string; stage: string }>('select order_no, stage from rm_orders where order_no = any($1)', [orderNos]);
  return new Map(rows.map((r) => [r.order_no, r.stage]));
}

/** Waits until every order has reached the stage in the read model; throws naming those that did not. */
export async function awaitStage(service: RunningService, orderNos: readonly string[], stage: string, timeoutMs = 30_000): Promise<void> {
  const stages = await until(
    () => stagesOf(service, orderNos),
    (found) => orderNos.every((n) => found.get(n) === stage),
    timeoutMs,
    100,
  );
  const late = orderNos.filter((n) => stages.get(n) !== stage);
  if (late.length > 0) throw new Error(`${late.length} orders never reached ${stage}: ${late.slice(0, 5).map((n) => `${n} (${stages.get(n)})`)}`);
}

/** Orders with an unknown result, submitted one after the other, each waited for. */
export async function unknownOrders(service: RunningService, merchant: TestMerchant, accountIds: readonly string[]): Promise<string[]> {
  const orderNos: string[] = [];
  for (const accountId of accountIds) orderNos.push(await submitOrder(service, merchant, accountId));
  await awaitStage(service, orderNos, 'unknown');
  return orderNos;
}

/**
 * An order whose result is unknown though the upstream never received it:
 * the send was recorded, then the request was lost before it arrived (here
 * it never leaves: fulfilment is paused while the order is made).
 */
export async function unknownNeverReceived(service: RunningService, merchant: TestMerchant): Promise<string> {
  const worker = service.app.get(FulfilmentWorker, { strict: false });
  await worker.stop();
  try {
    const orderNo = await submitOrder(service, merchant, `7${++seq}00042`);
    await service.commands.execute(new RecordUpstreamAttempt(orderNo));
    await service.commands.execute(new MarkResultUnknown(orderNo, 'no reply within 100 ms', 'lost on the way'));
    // The fulfilment job is closed by the projection: only then may the worker run again.
    await service.catchUp();
    return orderNo;
  } finally {
    worker.start();
  }
}

/** An order left in fulfilment (accepted, never sent): fulfilment stays paused until `resume` is called. */
export async function orderInFlight(service: RunningService, merchant: TestMerchant): Promise<{ orderNo: string; resume: () => void }> {
  const worker = service.app.get(FulfilmentWorker, { strict: false });
  await worker.stop();
  const orderNo = await submitOrder(service, merchant, `8${++seq}00043`);
  await awaitStage(service, [orderNo], 'accepted');
  return { orderNo, resume: () => worker.start() };
}
