import { randomBytes } from 'node:crypto';
import { Client, PoolConfig } from 'pg';
import { connectionConfig } from '../../src/config/database-connection';
import { quoteIdentifier } from '../../src/infrastructure/postgres/connection';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

interface Health {
  success: boolean;
  code: string;
  data: { status: string; event_store: string; projections: Record<string, string | null> };
}

async function getHealth(service: RunningService): Promise<{ status: number; body: Health }> {
  const response = await fetch(`${service.url}/health`);
  return { status: response.status, body: (await response.json()) as Health };
}

/** On a fresh database no projection has processed an event: null, not a stand-in position. */
function expectHealthy({ status, body }: { status: number; body: Health }) {
  expect(status).toBe(200);
  expect(body).toEqual({
    success: true,
    code: 'OK',
    data: {
      status: 'ok',
      event_store: 'postgres',
      projections: { 'callback-schedule': null, 'fulfilment-jobs': null, 'order-minutes': null, orders: null, wallets: null },
    },
  });
}

/** Starts services at once; stops the ones that came up if any did not, then rethrows. */
async function startAtOnce(count: number, start: () => Promise<RunningService>, running: RunningService[]): Promise<RunningService[]> {
  const results = await Promise.allSettled(Array.from({ length: count }, start));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  running.push(...started);
  const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
  if (failures.length > 0) {
    throw new Error(`${failures.length} of ${count} services failed to start: ${failures.map((e) => e?.message ?? String(e)).join('; ')}`);
  }
  return started;
}

describe('service start-up', () => {
  const running: RunningService[] = [];
  const databases: TestDatabase[] = [];
  const extraDatabases: string[] = [];
  afterAll(async () => {
    await Promise.allSettled(running.map((s) => s.stop()));
    await Promise.allSettled(databases.map((db) => db.drop()));
    if (extraDatabases.length > 0) {
      const admin = new Client(serverConfigFor('postgres'));
      await admin.connect();
      try {
        for (const name of extraDatabases) await admin.query(`drop database if exists ${quoteIdentifier(name)} with (force)`);
      } finally {
        await admin.end();
      }
    }
  });

  async function freshDatabase(): Promise<TestDatabase> {
    const db = await createTestDatabase('topup_startup');
    databases.push(db);
    return db;
  }

  describe('one service on a fresh database', () => {
    let service: RunningService;

    beforeAll(async () => {
      const db = await freshDatabase();
      [service] = await startAtOnce(1, () => startService(db), running);
    });

    it('answers GET /health over HTTP', async () => {
      expectHealthy(await getHealth(service));
    });

    it('GET /health, /health/live and /health/ready answer in the one envelope; positions once the projections have processed an event', async () => {
      await service.commands.execute(new OpenWallet('health-wallet', 'USD'));
      await service.catchUp();
      const { status, body } = await getHealth(service);
      expect(status).toBe(200);
      expect(body).toMatchObject({ success: true, code: 'OK', data: { status: 'ok' } });
      expect(body.data.projections.wallets).toMatch(/^\d+\/\d+$/);
      for (const path of ['/health/live', '/health/ready']) {
        const reply = await fetch(`${service.url}${path}`);
        expect({ path, status: reply.status }).toEqual({ path, status: 200 });
        expect(Object.keys((await reply.json()) as object).sort()).toEqual(['code', 'data', 'success']);
      }
    });

    it('answers an unknown route with 404', async () => {
      const response = await fetch(`${service.url}/no-such-route`);
      expect(response.status).toBe(404);
      await response.text();
    });
  });

  it('two services started at once on the same fresh database both come up', async () => {
    const db = await freshDatabase();
    const [a, b] = await startAtOnce(2, () => startService(db), running);
    expect(a.url).not.toBe(b.url);
    expectHealthy(await getHealth(a));
    expectHealthy(await getHealth(b));
    const { rows } = await db.pool.query<{ n: string; distinct_ids: string }>(
      'select count(*)::text as n, count(distinct id)::text as distinct_ids from schema_migrations',
    );
    expect(rows[0].n).toBe(rows[0].distinct_ids);
  });

  it('two services started at once on a database that does not exist yet both create it and come up', async () => {
    const name = `topup_startup_new_${randomBytes(5).toString('hex')}`;
    extraDatabases.push(name);
    const env = databaseEnvFor(name);
    const fakeDb = { env } as unknown as TestDatabase; // startService only reads db.env
    const [a, b] = await startAtOnce(2, () => startService(fakeDb), running);
    expectHealthy(await getHealth(a));
    expectHealthy(await getHealth(b));
  });
});

/** Settings for the test server (DATABASE_URL or PG*), naming another database. */
function serverConfigFor(database: string): PoolConfig {
  const server = connectionConfig(process.env.DATABASE_URL);
  if (!server.connectionString) return { ...server, database };
  const url = new URL(server.connectionString);
  url.pathname = `/${database}`;
  return { connectionString: url.toString() };
}

function databaseEnvFor(database: string): Record<string, string> {
  const config = serverConfigFor(database);
  if (config.connectionString) return { DATABASE_URL: config.connectionString };
  const env: Record<string, string> = { PGDATABASE: database };
  if (config.host) env.PGHOST = String(config.host);
  if (config.port) env.PGPORT = String(config.port);
  if (config.user) env.PGUSER = String(config.user);
  if (typeof config.password === 'string') env.PGPASSWORD = config.password;
  return env;
}
