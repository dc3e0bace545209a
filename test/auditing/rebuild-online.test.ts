import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { adminClient, Reply } from '../back-office/admin-client';
import { orderInput } from '../support/fixtures';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

const REBUILD = '/admin/v1/projections/rebuild';

describe('POST /admin/v1/projections/rebuild: online, in the background', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let admin: ReturnType<typeof adminClient>;
  let merchants: TestMerchant[];

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    admin = adminClient(service.url);
    merchants = [await provisionMerchant(service, { deposit: 10_000_000n }), await provisionMerchant(service, { deposit: 10_000_000n })];
    // History for the rebuild to chew on, so that it overlaps the load below.
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < 800; i = next++) {
          const merchant = merchants[i % 2].merchantId;
          const result = await service.commands.execute(new SubmitOrder(orderInput(merchant, `seed-${i}`)));
          if (result.outcome !== 'accepted') continue;
          const orderNo = result.order.order!.orderNo;
          if (i % 3 === 0) await service.commands.execute(new SettleOrder(orderNo));
          if (i % 3 === 1) await service.commands.execute(new ReleaseFunds(orderNo, 'UPSTREAM_REJECTED', 'rejected'));
        }
      }),
    );
    await service.catchUp();
  });
  afterAll(async () => teardown());

  /**
   * Signed merchant traffic until stopped: every reply's status, or the error
   * that replaced it. Paced: a rebuild replays a few hundred events a second
   * here (one process serves, loads and rebuilds), and an online rebuild can
   * only finish when the log grows slower than it replays.
   */
  function merchantLoad(workers: number, pauseMs: number) {
    const outcomes: (number | string)[] = [];
    let stopped = false;
    let n = 0;
    const record = async (request: Promise<{ status: number }>) => {
      try {
        const reply = await request;
        outcomes.push(reply.status);
        return reply;
      } catch (error) {
        outcomes.push(String(error));
        if (outcomes.length > 100_000) stopped = true; // a dead server answers at once: never spin for ever
        return undefined;
      }
    };
    const done = Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        while (!stopped) {
          const merchant = merchants[w % 2];
          const outTradeNo = `load-${w}-${n++}`;
          const body = JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '2001' } });
          const submitted = await record(signedFetch(service, merchant, { path: '/api/v2/topup/submit', body }));
          if (submitted?.status === 202) {
            await record(signedFetch(service, merchant, { path: '/api/v2/topup/query', body: JSON.stringify({ out_trade_no: outTradeNo }) }));
          }
          await record(signedFetch(service, merchant, { path: '/api/v2/balance' }));
          await new Promise((r) => setTimeout(r, pauseMs));
        }
      }),
    );
    return {
      outcomes,
      async stop() {
        stopped = true;
        await done;
      },
    };
  }

  async function waitUntilFinished(id: string) {
    let last: unknown;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      const reply = await admin('GET', `${REBUILD}/${id}`);
      expect(reply.status).toBe(200);
      if (reply.body.data.status !== 'running') return reply.body.data;
      last = reply.body.data;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`rebuild ${id} still running after 60 s: ${JSON.stringify(last)}`);
  }

  it('A rebuild under load (submits running) finishes with read models equal to a fresh replay, and no merchant request fails during it', async () => {
    const load = merchantLoad(4, 20);
    let started: Reply | undefined;
    let again: Reply | undefined;
    let finished: any;
    let duringRebuild: number | undefined;
    try {
      await new Promise((r) => setTimeout(r, 300));
      started = await admin('POST', REBUILD, {});
      const before = load.outcomes.length;
      again = await admin('POST', REBUILD, { projection: 'orders' });
      finished = started.status === 202 ? await waitUntilFinished(started.body.data.rebuild_id) : undefined;
      duringRebuild = load.outcomes.length - before;
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await load.stop();
    }
    expect(started!.status).toBe(202);
    expect(started!.body.data).toEqual({ rebuild_id: expect.stringMatching(/^rb_/), status: 'running' });
    expect({ status: again!.status, code: again!.body.code }).toEqual({ status: 409, code: 'REBUILD_RUNNING' });

    expect(finished).toMatchObject({ status: 'done', finished_at: expect.any(String) });
    expect(finished.projections).toEqual([
      { name: 'orders', events: expect.any(Number), position: expect.stringMatching(/^\d+\/\d+$/) },
      { name: 'wallets', events: expect.any(Number), position: expect.stringMatching(/^\d+\/\d+$/) },
      { name: 'order-minutes', events: expect.any(Number), position: expect.stringMatching(/^\d+\/\d+$/) },
    ]);
    expect(finished.projections[0].events).toBeGreaterThan(2000);
    const failures = load.outcomes.filter((o) => typeof o !== 'number' || !((o >= 200 && o < 300) || o === 402));
    expect(failures).toEqual([]);
    expect(duringRebuild).toBeGreaterThan(50);

    await service.catchUp();
    const verified = await admin('POST', '/admin/v1/audit/verify', {});
    expect(verified.body.data).toMatchObject({ clean: true, differences: [] });
    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    expect(await checkReadModels(service.pool, facts)).toEqual([]);
    const leftovers = await service.pool.query(`select tablename from pg_tables where tablename like 'rm\\_%\\_\\_%'`);
    expect(leftovers.rows).toEqual([]);
  });

  it('rebuilds one projection when asked, and says what it did', async () => {
    const started = await admin('POST', REBUILD, { projection: 'wallets' });
    expect(started.status).toBe(202);
    const finished = await waitUntilFinished(started.body.data.rebuild_id);
    expect(finished).toMatchObject({ status: 'done', requested_by: 'admin', projections: [{ name: 'wallets', events: expect.any(Number) }] });
    const audit = await service.pool.query(`select staff_id, details from back_office_audit where target = $1`, [`rebuild:${started.body.data.rebuild_id}`]);
    expect(audit.rows).toEqual([{ staff_id: 'admin', details: { projections: ['wallets'] } }]);
  });

  it('is for admins only, and checks its input', async () => {
    for (const role of ['auditor', 'reconciler']) {
      const staff = await admin.createStaff(role);
      expect((await admin('POST', REBUILD, {}, { token: staff.token })).status).toBe(403);
      expect((await admin('GET', `${REBUILD}/rb_0`, undefined, { token: staff.token })).status).toBe(403);
    }
    expect((await admin('POST', REBUILD, { projection: 'fulfilment' })).body).toMatchObject({ code: 'VALIDATION_FAILED', field: 'projection' });
    expect((await admin('GET', `${REBUILD}/rb_unknown`)).body).toMatchObject({ code: 'REBUILD_NOT_FOUND' });
  });
});
