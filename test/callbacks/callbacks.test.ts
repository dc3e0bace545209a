import { callbackPayload } from '../../src/callbacks/callback-worker';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { loadAggregate } from '../../src/ledger/command-handling';
import { isFinal, orderDecider } from '../../src/ledger/order/order.decider';
import { orderStream } from '../../src/ledger/streams';
import { verifyCallback } from '../../src/merchant-client/signing';
import { adminClient } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint, Reply } from '../support/callback-endpoint';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const DELAYS = [100, 200, 300, 400, 500];

/** Waits until `check` holds, or `timeoutMs` passed (the assertions after it then fail). */
const until = async (check: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
};

describe('callbacks: signed, acknowledged by the contract rule, retried on schedule', () => {
  let db: TestDatabase;
  let service: RunningService;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await startService(db, CALLBACK_ENV);
  });
  afterAll(async () => {
    await service.stop();
    await db.drop();
  });

  async function finalOrder(merchant: TestMerchant, outcome: 'success' | 'failed' = 'success'): Promise<string> {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: `CB-${++seq}`, sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '3' } }),
    });
    const orderNo = reply.body.data.order_no as string;
    if (outcome === 'success') await service.commands.execute(new SettleOrder(orderNo));
    else await service.commands.execute(new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'The account does not exist'));
    return orderNo;
  }
  const endpointAnswering = (reply: (attempt: number) => Reply) => callbackEndpoint((_, attempt) => reply(attempt));

  describe('the acknowledgement rule, end to end', () => {
    it.each<[string, Reply, boolean]>([
      ['success', { status: 200, body: 'success' }, true],
      ['ok', { status: 200, body: 'ok' }, true],
      ['{"success":true}', { status: 200, body: '{"success":true}' }, true],
      ['{"success":"true"}', { status: 200, body: '{"success":"true"}' }, false],
      ['SUCCESS', { status: 200, body: 'SUCCESS' }, false],
      ['success\\n', { status: 200, body: 'success\n' }, false],
      ['an empty 204', { status: 204 }, false],
      ['a 302', { status: 302, body: 'success' }, false],
      ['a 500 with body success', { status: 500, body: 'success' }, false],
    ])('%s', async (_, reply, acknowledged) => {
      const endpoint = await endpointAnswering((attempt) => (attempt === 1 ? reply : { status: 200, body: 'success' }));
      try {
        const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
        const orderNo = await finalOrder(merchant);
        await until(() => endpoint.forOrder(orderNo).length >= (acknowledged ? 1 : 2));
        await new Promise((r) => setTimeout(r, acknowledged ? 400 : 0));
        expect(endpoint.forOrder(orderNo)).toHaveLength(acknowledged ? 1 : 2);
      } finally {
        await endpoint.stop();
      }
    });

    it('a timeout is not an acknowledgement', async () => {
      const endpoint = await endpointAnswering((attempt) => (attempt === 1 ? 'hang' : { status: 200, body: 'ok' }));
      try {
        const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
        const orderNo = await finalOrder(merchant);
        await until(() => endpoint.forOrder(orderNo).length >= 2, 5000);
        const [first, second] = endpoint.forOrder(orderNo);
        expect(second.at - first.at).toBeGreaterThanOrEqual(1000 + DELAYS[0] - 20);
      } finally {
        await endpoint.stop();
      }
    });
  });

  it('a never-acknowledging endpoint gets exactly 6 attempts, at the configured delays, and no more', async () => {
    const endpoint = await endpointAnswering(() => ({ status: 500, body: 'nope' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const orderNo = await finalOrder(merchant, 'failed');
      await until(() => endpoint.forOrder(orderNo).length >= 6);
      await new Promise((r) => setTimeout(r, 1500));
      const attempts = endpoint.forOrder(orderNo);
      expect(attempts).toHaveLength(6);
      attempts.slice(1).forEach((a, i) => {
        const gap = a.at - attempts[i].at;
        expect([i, gap >= DELAYS[i] - 5]).toEqual([i, true]);
        expect([i, gap < DELAYS[i] + 400]).toEqual([i, true]);
      });
      const log = await adminClient(service.url)('GET', `/admin/v1/orders/${orderNo}/callbacks`);
      expect(log.body.data).toMatchObject({ state: 'exhausted', attempts_made: 6, next_attempt_at: null });
      expect(log.body.data.attempts).toHaveLength(6);
      expect(log.body.data.attempts[0]).toMatchObject({ attempt: 1, kind: 'scheduled', status_code: 500, reply_excerpt: 'nope', acknowledged: false });
    } finally {
      await endpoint.stop();
    }
  });

  it('an endpoint that acknowledges the third attempt gets exactly 3', async () => {
    const endpoint = await endpointAnswering((attempt) => (attempt < 3 ? { status: 503 } : { status: 200, body: '{"success": true}' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const orderNo = await finalOrder(merchant);
      await until(() => endpoint.forOrder(orderNo).length >= 3);
      await new Promise((r) => setTimeout(r, 1200));
      expect(endpoint.forOrder(orderNo)).toHaveLength(3);
      const log = await adminClient(service.url)('GET', `/admin/v1/orders/${orderNo}/callbacks`);
      expect(log.body.data).toMatchObject({ state: 'acknowledged', attempts_made: 3 });
    } finally {
      await endpoint.stop();
    }
  });

  it('carries the contract payload, signed so the merchant client verifies it with the secret alone', async () => {
    const endpoint = await endpointAnswering(() => ({ status: 200, body: 'success' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const orderNo = await finalOrder(merchant, 'failed');
      await until(() => endpoint.forOrder(orderNo).length >= 1);
      const [callback] = endpoint.forOrder(orderNo);
      expect(JSON.parse(callback.body)).toEqual({
        order_no: orderNo,
        out_trade_no: expect.stringMatching(/^CB-/),
        status: 'failed',
        amount: '1.20',
        account_id: '12345678',
        fail_code: 'INVALID_ACCOUNT',
        fail_reason: 'The account does not exist',
        completed_at: expect.stringMatching(/\+00:00$/),
      });
      expect(callback.headers['x-api-key']).toBe(merchant.apiKey);
      expect(verifyCallback({ appSecret: merchant.appSecret, path: '/hooks/topup', headers: callback.headers, rawBody: callback.body })).toEqual({ ok: true });
      expect(verifyCallback({ appSecret: 'f'.repeat(64), path: '/hooks/topup', headers: callback.headers, rawBody: callback.body }).ok).toBe(false);
    } finally {
      await endpoint.stop();
    }
  });

  it("carries what the order's events say: read with the claim from the read model, or from the events when the row does not show the order final", async () => {
    const endpoint = await endpointAnswering(() => ({ status: 200, body: 'success' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const succeeded = await finalOrder(merchant, 'success');
      const failed = await finalOrder(merchant, 'failed');
      await until(() => endpoint.forOrder(succeeded).length >= 1 && endpoint.forOrder(failed).length >= 1);
      const fromEvents = async (orderNo: string) => {
        const { state } = await loadAggregate(service.store, orderStream(orderNo), orderDecider);
        if (!isFinal(state)) throw new Error(`order ${orderNo} is ${state.stage}`);
        return callbackPayload(state);
      };
      for (const orderNo of [succeeded, failed]) expect(JSON.parse(endpoint.forOrder(orderNo)[0].body)).toEqual(await fromEvents(orderNo));

      // A redelivery is sent from the read model's row: the order's stream is not read.
      const reconciler = await adminClient(service.url).createStaff('reconciler');
      const redeliver = async (orderNo: string) => {
        const sent = endpoint.forOrder(orderNo).length;
        const reads = jest.spyOn(service.store, 'readStream');
        try {
          const reply = await adminClient(service.url)('POST', `/admin/v1/orders/${orderNo}/callbacks/redeliver`, {}, { token: reconciler.token });
          expect(reply.status).toBe(202);
          await until(() => endpoint.forOrder(orderNo).length > sent);
          return {
            body: JSON.parse(endpoint.forOrder(orderNo)[sent].body),
            streamReads: reads.mock.calls.filter(([stream]) => stream === orderStream(orderNo)).length,
          };
        } finally {
          reads.mockRestore();
        }
      };
      expect(await redeliver(succeeded)).toEqual({ body: await fromEvents(succeeded), streamReads: 0 });

      // The row as a read model being rebuilt might show it: not final yet. A redelivery then reads the events.
      const { rows } = await service.pool.query('select stage, completed_at, fail_code from rm_orders where order_no = $1', [failed]);
      await service.pool.query(`update rm_orders set stage = 'sent', completed_at = null, fail_code = null where order_no = $1`, [failed]);
      try {
        expect(await redeliver(failed)).toEqual({ body: await fromEvents(failed), streamReads: 1 });
      } finally {
        const [row] = rows;
        await service.pool.query('update rm_orders set stage = $2, completed_at = $3, fail_code = $4 where order_no = $1', [
          failed,
          row.stage,
          row.completed_at,
          row.fail_code,
        ]);
      }
    } finally {
      await endpoint.stop();
    }
  });

  it('staff can read the delivery log and redeliver', async () => {
    const endpoint = await endpointAnswering(() => ({ status: 200, body: 'ok' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      const orderNo = await finalOrder(merchant);
      await until(() => endpoint.forOrder(orderNo).length >= 1);
      const admin = adminClient(service.url);
      const reconciler = await admin.createStaff('reconciler');
      const auditor = await admin.createStaff('auditor');
      expect((await admin('GET', `/admin/v1/orders/${orderNo}/callbacks`, undefined, { token: auditor.token })).status).toBe(403);
      const redelivered = await admin('POST', `/admin/v1/orders/${orderNo}/callbacks/redeliver`, {}, { token: reconciler.token });
      expect(redelivered.status).toBe(202);
      await until(() => endpoint.forOrder(orderNo).length >= 2);
      await new Promise((r) => setTimeout(r, 300));
      expect(endpoint.forOrder(orderNo)).toHaveLength(2);
      const log = await admin('GET', `/admin/v1/orders/${orderNo}/callbacks`, undefined, { token: reconciler.token });
      expect(log.body.data.attempts.map((a: { kind: string; acknowledged: boolean }) => [a.kind, a.acknowledged])).toEqual([
        ['scheduled', true],
        ['manual', true],
      ]);
      expect(log.body.data.attempts[0]).toMatchObject({ status_code: 200, latency_ms: expect.any(Number), url: endpoint.url });
      expect((await admin('GET', '/admin/v1/orders/TNOPE/callbacks')).status).toBe(404);
    } finally {
      await endpoint.stop();
    }
  });
});

describe('callbacks: the SSRF guard', () => {
  it('refuses a callback URL that resolves to a private address, at send time', async () => {
    const db = await createTestDatabase();
    const service = await startService(db, { ...CALLBACK_ENV, CALLBACK_ALLOW_PRIVATE_NETWORKS: 'false' });
    const endpoint = await callbackEndpoint(() => ({ status: 200, body: 'ok' }));
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url.replace('127.0.0.1', 'localhost') });
      const reply = await signedFetch(service, merchant, {
        path: '/api/v2/topup/submit',
        body: JSON.stringify({ out_trade_no: 'SSRF-1', sku_id: 'mlbb-86', account_id: '1', account_fields: { server_id: '3' } }),
      });
      await service.commands.execute(new SettleOrder(reply.body.data.order_no));
      const admin = adminClient(service.url);
      let log;
      for (let i = 0; i < 100; i++) {
        log = await admin('GET', `/admin/v1/orders/${reply.body.data.order_no}/callbacks`);
        if (log.body.data?.attempts?.length && !log.body.data.attempts[0].in_progress) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(log!.body.data.attempts[0]).toMatchObject({ acknowledged: false, status_code: null, error: expect.stringMatching(/forbidden address/) });
      expect(endpoint.received).toHaveLength(0);
    } finally {
      await endpoint.stop();
      await service.stop();
      await db.drop();
    }
  });
});

describe('callbacks: one slow merchant does not hold up another', () => {
  /** Submits an order of the merchant's and settles it at once: its callback is due. */
  const settledOrder = async (service: RunningService, merchant: TestMerchant, outTradeNo: string) => {
    const reply = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body: JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: '1', account_fields: { server_id: '3' } }),
    });
    await service.commands.execute(new SettleOrder(reply.body.data.order_no));
    return reply.body.data.order_no as string;
  };

  it("sends a merchant's next callback once its endpoint has replied, while the last one's result waits to be recorded", async () => {
    const db = await createTestDatabase();
    // One callback of a merchant in flight at most.
    const service = await startService(db, { ...CALLBACK_ENV, CALLBACK_CONCURRENCY_PER_MERCHANT: '1' });
    const endpoint = await callbackEndpoint(() => ({ status: 200, body: 'ok' }));
    // Recording a result counts it in callback_attempt_minutes: while this transaction holds the table, no result is recorded.
    const blocker = await db.pool.connect();
    try {
      const merchant = await provisionMerchant(service, { callbackUrl: endpoint.url });
      await blocker.query('begin');
      await blocker.query('lock table callback_attempt_minutes in exclusive mode');
      const first = await settledOrder(service, merchant, 'SLOT-1');
      await until(() => endpoint.forOrder(first).length === 1);
      const second = await settledOrder(service, merchant, 'SLOT-2');
      await until(() => endpoint.forOrder(second).length === 1);

      expect(endpoint.forOrder(second)).toHaveLength(1);
      // The first's result was not recorded meanwhile: its delivery is still on the schedule, leased.
      const { rows: waiting } = await db.pool.query('select order_no from callback_deliveries where leased_by is not null order by order_no');
      expect(waiting.map((r) => r.order_no).sort()).toEqual([first, second].sort());

      await blocker.query('rollback');
      // Both results recorded: acknowledged deliveries leave the schedule, and neither was sent twice.
      await until(async () => (await db.pool.query('select 1 from callback_deliveries')).rowCount === 0);
      expect((await db.pool.query('select count(*)::int as n from callback_deliveries')).rows[0].n).toBe(0);
      expect(endpoint.received).toHaveLength(2);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      blocker.release();
      await endpoint.stop();
      await service.stop();
      await db.drop();
    }
  });

  it('delivers a second merchant callback while the first merchant endpoint hangs every request', async () => {
    const db = await createTestDatabase();
    // 8 in flight per instance, at most 4 per merchant; a hung request is held for 5 s.
    const service = await startService(db, { ...CALLBACK_ENV, CALLBACK_TIMEOUT_MS: '5000', CALLBACK_CONCURRENCY_PER_MERCHANT: '4' });
    const slow = await callbackEndpoint(() => 'hang');
    const fast = await callbackEndpoint(() => ({ status: 200, body: 'ok' }));
    try {
      const slowMerchant = await provisionMerchant(service, { callbackUrl: slow.url, deposit: 100_000n });
      const fastMerchant = await provisionMerchant(service, { callbackUrl: fast.url });
      for (let i = 0; i < 20; i++) await settledOrder(service, slowMerchant, `SLOW-${i}`);
      const deadline = Date.now() + 5000;
      while (slow.received.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const firstHung = slow.received[0].at;
      const orderNo = await settledOrder(service, fastMerchant, 'FAST-1');
      while (fast.forOrder(orderNo).length === 0 && Date.now() < firstHung + 5000) await new Promise((r) => setTimeout(r, 20));
      // Delivered before any hung request could time out and free a slot, so not queued behind them.
      expect(fast.forOrder(orderNo)).toHaveLength(1);
      expect(fast.forOrder(orderNo)[0].at).toBeLessThan(firstHung + 5000);
      // And the slow merchant never held more than its share.
      expect(slow.received.length).toBe(4);
    } finally {
      await slow.stop();
      await fast.stop();
      await service.stop();
      await db.drop();
    }
  });
});
