import { FulfilmentWorker } from '../../src/fulfilment/worker/fulfilment-worker';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { RecordUpstreamAttempt } from '../../src/ledger/commands/record-upstream-attempt/record-upstream-attempt.command';
import { TestMerchant } from '../support/merchant-fixture';
import { submitOrder } from '../support/reconciliation-orders';
import { RunningService } from '../support/service';

/**
 * An outage as the pictures show it: orders the upstream received and
 * settled (delivered, or refused for accounts ending 000) whose reply never
 * reached the service, so their result is unknown to it. Each is sent as
 * the service sends it (the send recorded first), straight to the
 * simulator with the order number as its Idempotency-Key, and then marked
 * unknown as the sender marks a lost reply. Fulfilment is paused meanwhile,
 * so nothing else sends them.
 */
export async function ordersWithLostReplies(service: RunningService, merchant: TestMerchant, upstreamUrl: string, accountIds: readonly string[]) {
  const worker = service.app.get(FulfilmentWorker, { strict: false });
  await worker.stop();
  const orderNos: string[] = [];
  try {
    for (const accountId of accountIds) {
      const orderNo = await submitOrder(service, merchant, accountId);
      await service.commands.execute(new RecordUpstreamAttempt(orderNo));
      const sent = await fetch(`${upstreamUrl}/v1/topups`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': orderNo },
        body: JSON.stringify({ order_no: orderNo, account_id: accountId, amount: '1.20', currency: 'USD' }),
      });
      if (!sent.ok) throw new Error(`the simulator answered ${sent.status}`);
      await service.commands.execute(new MarkResultUnknown(orderNo, 'no reply within 1500 ms', 'the connection was reset'));
      orderNos.push(orderNo);
    }
    // The fulfilment jobs are closed by the projection: only then may the worker run again.
    await service.catchUp();
    return orderNos;
  } finally {
    worker.start();
  }
}
