import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { spawnService } from '../support/child-service';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { describeEachStore } from '../support/event-stores';
import { TestDatabase } from '../support/test-database';

/** Attempts a few hundred milliseconds apart, so a kill can land between two of them. */
const SLOW_SCHEDULE = { ...CALLBACK_ENV, CALLBACK_RETRY_DELAYS: '600ms,600ms,600ms,600ms,600ms' };

describeEachStore('callbacks across a SIGKILL and across two instances', (store) => {
  let db: TestDatabase;

  beforeEach(async () => {
    db = await store.createDatabase();
  });
  afterEach(async () => db.drop());

  async function finalOrders(service: RunningService, merchant: TestMerchant, count: number): Promise<string[]> {
    const orderNos: string[] = [];
    for (let i = 0; i < count; i++) {
      const reply = await signedFetch(service, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: `X-${i}`, sku_id: 'mlbb-86', account_id: '1', account_fields: { server_id: '3' } }),
      });
      orderNos.push(reply.body.data.order_no);
    }
    return orderNos;
  }
  const until = async (check: () => boolean, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  it('SIGKILL between attempts: the schedule continues after restart, no attempt lost or doubled', async () => {
    const endpoint = await callbackEndpoint(() => ({ status: 500 }));
    try {
      const setup = await startService(db);
      const merchant = await provisionMerchant(setup, { callbackUrl: endpoint.url });
      const [orderNo] = await finalOrders(setup, merchant, 1);
      await setup.stop();

      const child = await spawnService(db, SLOW_SCHEDULE);
      const settled = await startService(db); // settles the order; its own sender is off
      try {
        await settled.commands.execute(new SettleOrder(orderNo));
        // Watched from the settlement on: stopping the settling service first
        // can take longer than the child's whole schedule on a busy machine.
        await until(() => endpoint.forOrder(orderNo).length >= 2);
        await new Promise((r) => setTimeout(r, 150)); // between attempt 2 and 3
        await child.kill('SIGKILL');
      } finally {
        await settled.stop();
      }
      const beforeRestart = endpoint.forOrder(orderNo).length;
      expect(beforeRestart).toBe(2);

      const restarted = await startService(db, SLOW_SCHEDULE);
      try {
        await until(() => endpoint.forOrder(orderNo).length >= 6);
        await new Promise((r) => setTimeout(r, 1500));
        const attempts = endpoint.forOrder(orderNo);
        expect(attempts).toHaveLength(6);
        expect(new Set(attempts.map((a) => a.headers['x-nonce'])).size).toBe(6);
        const { rows } = await restarted.pool.query('select attempt from callback_attempts where order_no = $1 order by attempt', [orderNo]);
        expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
      } finally {
        await restarted.stop();
      }
    } finally {
      await endpoint.stop();
    }
  });

  it('two instances: each attempt is sent once', async () => {
    // A slow endpoint and four callbacks in flight per merchant and instance:
    // 120 attempts take one instance alone about 6 s, so both take part.
    const endpoint = await callbackEndpoint(() => ({ status: 500, delayMs: 200 }));
    const env = { ...CALLBACK_ENV, CALLBACK_CONCURRENCY_PER_MERCHANT: '4' };
    const [a, b] = await Promise.all([startService(db, env), startService(db, env)]);
    try {
      const merchant = await provisionMerchant(a, { callbackUrl: endpoint.url });
      const orderNos = await finalOrders(a, merchant, 20);
      await Promise.all(orderNos.map((o, i) => (i % 2 ? a : b).commands.execute(new SettleOrder(o))));
      await until(() => orderNos.every((o) => endpoint.forOrder(o).length >= 6));
      await new Promise((r) => setTimeout(r, 1500));
      for (const orderNo of orderNos) expect([orderNo, endpoint.forOrder(orderNo).length]).toEqual([orderNo, 6]);
      const { rows } = await a.pool.query<{ sent_by: string }>('select distinct sent_by from callback_attempts');
      expect(rows.length).toBe(2);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await endpoint.stop();
    }
  });
});
