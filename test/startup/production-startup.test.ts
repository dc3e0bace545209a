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
    it('no UPSTREAM_URL: stops, naming UPSTREAM_URL (the simulator would mark every order delivered)', async () => {
      const db = await freshDatabase();
      const exit = await runServiceUntilExit({ ...production, ...db.env }, EXIT_TIMEOUT_MS);
      expectRefused(exit, 'UPSTREAM_URL');
      expect(exit.code).toBe(78);
    }, EXIT_TIMEOUT_MS + 10_000);

    it('UPSTREAM_SIMULATOR=true: starts the simulator, with a warning that orders are not really delivered', async () => {
      const db = await freshDatabase();
      const service = await started(db, { ...production, UPSTREAM_SIMULATOR: 'true' });
      expect(service.output()).toMatch(/WARN.*UPSTREAM_SIMULATOR=true.*orders are NOT really delivered/);
      expect(service.output()).toContain('built-in upstream simulator at');
    });

    it('with UPSTREAM_URL and both secrets: starts, without the simulator', async () => {
      const db = await freshDatabase();
      const service = await started(db, { ...production, UPSTREAM_URL: 'http://127.0.0.1:1' });
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
      expect(service.output()).not.toContain('simulator');
      expect(service.output()).not.toContain('WARN');
    });
  });
});
