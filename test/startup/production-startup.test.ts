import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { connectionConfig } from '../../src/config/database-connection';
import { quoteIdentifier } from '../../src/infrastructure/postgres/connection';
import { ChildService, runServiceUntilExit, ServiceExit, spawnService } from '../support/child-service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const EXIT_TIMEOUT_MS = 40_000;
const ADMIN_TOKEN = 'production-test-admin-token-0123';
const KEY_1 = '1111111111111111111111111111111111111111111111111111111111111111';

/** What a refused start-up must look like: non-zero, the variable named, no stack, never listening. */
function expectRefused(exit: ServiceExit, ...mentions: string[]) {
  expect(exit.signal).toBeNull();
  expect(exit.code).not.toBe(0);
  for (const text of mentions) expect(exit.stderr).toContain(text);
  expect(exit.stderr).not.toMatch(/^\s+at /m);
  expect(exit.stdout).not.toContain('listening on');
}

describe('start-up with NODE_ENV=production refuses unsafe set-ups', () => {
  const databases: TestDatabase[] = [];
  const services: ChildService[] = [];
  afterAll(async () => {
    await Promise.allSettled(services.map((s) => s.kill('SIGTERM')));
    await Promise.allSettled(databases.map((db) => db.drop()));
  });
  async function freshDatabase(): Promise<TestDatabase> {
    const db = await createTestDatabase('topup_prod_startup');
    databases.push(db);
    return db;
  }
  async function started(db: TestDatabase, env: Record<string, string>): Promise<ChildService> {
    const service = await spawnService(db, env);
    services.push(service);
    return service;
  }
  const production = { NODE_ENV: 'production', ADMIN_TOKEN, SECRETS_KEY: KEY_1, PORT: '0' };

  describe('the upstream', () => {
    it(
      'no UPSTREAM_URL: stops, naming UPSTREAM_URL (the simulator would mark every order delivered)',
      async () => {
        const db = await freshDatabase();
        const exit = await runServiceUntilExit({ ...production, ...db.env }, EXIT_TIMEOUT_MS);
        expectRefused(exit, 'UPSTREAM_URL');
        expect(exit.code).toBe(78);
      },
      EXIT_TIMEOUT_MS + 10_000,
    );

    it('UPSTREAM_SIMULATOR=true: starts the simulator, with a warning that orders are not really delivered', async () => {
      const db = await freshDatabase();
      const service = await started(db, { ...production, UPSTREAM_SIMULATOR: 'true' });
      expect(jsonLines(service.output())).toContainEqual(
        expect.objectContaining({ level: 'warn', message: expect.stringMatching(/UPSTREAM_SIMULATOR=true.*orders are NOT really delivered/) }),
      );
      expect(service.output()).toContain('built-in upstream simulator at');
    });

    it('with UPSTREAM_URL and both secrets: starts, without the simulator', async () => {
      const db = await freshDatabase();
      const service = await started(db, { ...production, UPSTREAM_URL: 'http://127.0.0.1:1' });
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
      expect(service.output()).not.toContain('simulator');
      // Production logs one JSON object per line (LOG_FORMAT defaults to json there).
      // Nothing but plain lines, except the warnings about the test server's own settings (autovacuum off on CI: database-settings.test.ts).
      expect(jsonLines(service.output()).filter((line) => line.level !== 'info' && line.context !== 'DatabaseSettings')).toEqual([]);
    });
  });

  describe('the database', () => {
    const upstream = { ...production, UPSTREAM_URL: 'http://127.0.0.1:1' };
    const server = serverAddress();

    it(
      'a DATABASE_URL naming a database that does not exist: stops, and creates nothing',
      async () => {
        const name = `topup_prod_missing_${randomBytes(5).toString('hex')}`;
        const url = urlFor(name, 'not-the-password');
        try {
          const exit = await runServiceUntilExit({ ...upstream, DATABASE_URL: url }, EXIT_TIMEOUT_MS);
          expectRefused(exit, 'DATABASE_URL', name, server, 'does not exist');
          expect(exit.stderr).not.toContain('not-the-password');
          expect(exit.code).toBe(78);
          expect(await databaseExists(name)).toBe(false);
        } finally {
          await dropIfExists(name);
        }
      },
      EXIT_TIMEOUT_MS + 10_000,
    );

    // 69 (EX_UNAVAILABLE) when Postgres cannot be reached, 78 (EX_CONFIG) when it refuses what it was asked.
    it.each<[string, Record<string, string>, string[], number]>([
      ['a refused connection', { DATABASE_URL: 'postgres://postgres:hunter2@127.0.0.1:1/topup' }, ['DATABASE_URL', '127.0.0.1:1', 'topup', 'refused'], 69],
      [
        'a host that does not resolve',
        { DATABASE_URL: 'postgres://postgres:hunter2@no-such-host.invalid:5432/topup' },
        ['DATABASE_URL', 'no-such-host.invalid:5432'],
        69,
      ],
      ['a role the server refuses', { DATABASE_URL: `postgres://nobody_here:hunter2@${server}/postgres` }, ['DATABASE_URL', server, 'nobody_here'], 78],
      [
        'PG* variables, refused',
        { PGHOST: '127.0.0.1', PGPORT: '1', PGUSER: 'postgres', PGPASSWORD: 'hunter2', PGDATABASE: 'topup' },
        ['PGHOST', '127.0.0.1:1', 'refused'],
        69,
      ],
    ])(
      '%s: stops with one clear line naming the variable, without the password',
      async (_label, env, mentions, code) => {
        const exit = await runServiceUntilExit({ ...upstream, ...env }, EXIT_TIMEOUT_MS);
        expectRefused(exit, ...mentions);
        expect(exit.stderr).not.toContain('hunter2');
        expect(exit.code).toBe(code);
      },
      EXIT_TIMEOUT_MS + 10_000,
    );
  });
});

/** host:port of the test server, as DATABASE_URL or PG* name it. */
function serverAddress(): string {
  const config = connectionConfig(process.env.DATABASE_URL);
  if (config.connectionString) return new URL(config.connectionString).host;
  return `${config.host}:${config.port}`;
}

/** The test server as a DATABASE_URL naming another database, with this password. */
function urlFor(database: string, password: string): string {
  const config = connectionConfig(process.env.DATABASE_URL);
  const url = new URL(config.connectionString ?? `postgres://${config.user}@${config.host}:${config.port}`);
  url.pathname = `/${database}`;
  url.password = password;
  return url.toString();
}

async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const config = connectionConfig(process.env.DATABASE_URL);
  const client = new Client(config.connectionString ? { connectionString: urlFor('postgres', '') } : { ...config, database: 'postgres' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const databaseExists = (name: string) =>
  withServer(async (client) => (await client.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1);
const dropIfExists = (name: string) => withServer((client) => client.query(`drop database if exists ${quoteIdentifier(name)} with (force)`));

/** Every non-empty line parsed as JSON: a line that is not fails the test. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
