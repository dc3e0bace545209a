import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { PrivatePostgres, startPrivatePostgres } from '../support/private-postgres';
import { RunningService, startService } from '../support/service';

const MAX_LAG_MS = 1000;

async function ready(service: RunningService) {
  const reply = await fetch(`${service.url}/health/ready`);

  return { status: reply.status, headers: reply.headers, body: (await reply.json()) as any };
}

async function readyAgain(service: RunningService, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await ready(service);
    if (reply.status === 200 || Date.now() > deadline) return reply;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('health probes: /health/live, /health/ready (on a Postgres server of its own, which the test stops)', () => {
  let postgres: PrivatePostgres;
  let service: RunningService;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    service = await startService({ env: { DATABASE_URL: postgres.url } }, { READY_MAX_LAG_MS: String(MAX_LAG_MS) });
  });
  afterAll(async () => {
    await service?.stop();
    await postgres?.stop();
  });

  it('ready: 200 with every check passed; live and the summary /health answer as well', async () => {
    const reply = await ready(service);
    expect(reply.status).toBe(200);
    const passed = (detail?: unknown) => ({ ok: true, ms: expect.any(Number), ...(detail ? { detail } : {}) });
    expect(reply.body).toEqual({
      success: true,
      code: 'OK',
      data: {
        status: 'ready',
        checks: {
          postgres: passed(),
          event_store: passed(),
          migrations: passed({ applied: expect.any(Number) }),
          projections: passed({ max_lag_ms: MAX_LAG_MS, lag_ms: { orders: 0, wallets: 0, 'order-minutes': 0, 'fulfilment-jobs': 0, 'callback-schedule': 0 } }),
          // A new database has no wallets to load at start-up.
          wallets: passed({ state: 'done', wanted: 0, loaded: 0, events: 0, ms: expect.any(Number) }),
          // The test settings turn the backlog policy off; it is shown all the same.
          intake: passed({ shedding: false, waiting: 0, oldest_wait_s: 0, max_waiting: 0, max_wait_s: 0 }),
        },
      },
    });
    const live = await fetch(`${service.url}/health/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ success: true, code: 'OK', data: { status: 'live', uptime_s: expect.any(Number) } });
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
  });

  it('ready: 503 NOT_READY naming Postgres and the event store while the database is down; live stays 200; ready again once it is back', async () => {
    await postgres.crash();
    const down = await ready(service);
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBe('5');
    expect(down.headers.get('x-request-id')).toBeTruthy();
    expect(down.body).toMatchObject({
      success: false,
      code: 'NOT_READY',
      message: expect.stringMatching(/^Not ready: postgres: .+; event_store: .+/),
      checks: { postgres: { ok: false, error: expect.any(String) }, event_store: { ok: false, error: expect.any(String) } },
    });
    expect(Object.keys(down.body).sort()).toEqual(['checks', 'code', 'message', 'success']);
    // An unauthenticated probe says what failed, not where the database lives.
    expect(down.body.checks.postgres.error).toBe('the database does not answer');
    const port = new URL(postgres.url).port;
    expect(JSON.stringify(down.body)).not.toMatch(new RegExp(`127\\.0\\.0\\.1|:${port}\\b|ECONNREFUSED`));
    // Liveness never depends on the database: a restart would not bring it back.
    expect((await fetch(`${service.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${service.url}/health`)).status).toBe(200);

    await postgres.start();
    expect((await readyAgain(service)).status).toBe(200);
  });

  it(`ready: 503 while a projection is more than READY_MAX_LAG_MS (${MAX_LAG_MS} ms) behind the log`, async () => {
    await service.commands.execute(new OpenWallet('lagging-wallet', 'USD'));
    await service.catchUp();
    await service.projections.stop();
    try {
      await service.commands.execute(new DepositFunds('lagging-wallet', 'while-stopped', 500n, 'test'));
      expect((await ready(service)).status).toBe(200); // behind, but not for long yet
      await new Promise((r) => setTimeout(r, MAX_LAG_MS + 200));
      const behind = await ready(service);
      expect(behind.status).toBe(503);
      expect(behind.body.message).toMatch(
        /^Not ready: projections: orders, wallets, order-minutes, fulfilment-jobs, callback-schedule more than 1000 ms behind the log$/,
      );
      expect(behind.body.checks.projections.detail.lag_ms.wallets).toBeGreaterThan(MAX_LAG_MS);
      expect(behind.body.checks.postgres.ok).toBe(true);
    } finally {
      await service.projections.start();
    }
    expect((await readyAgain(service)).status).toBe(200);
  });

  it('ready: 503 while a migration the service knows is not applied', async () => {
    await service.pool.query(`delete from schema_migrations where id = 'callbacks/001-attempts'`);
    try {
      const reply = await ready(service);
      expect(reply.status).toBe(503);
      expect(reply.body.message).toBe('Not ready: migrations: 1 migrations not applied');
      expect(reply.body.checks.migrations).toEqual({
        ok: false,
        ms: expect.any(Number),
        error: '1 migrations not applied',
        detail: { missing: ['callbacks/001-attempts'] },
      });
    } finally {
      await service.pool.query(`insert into schema_migrations (id) values ('callbacks/001-attempts')`);
    }
    expect((await ready(service)).status).toBe(200);
  });
});
