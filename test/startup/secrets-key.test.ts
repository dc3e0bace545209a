import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { AppSecretCipher } from '../../src/merchant-directory/app-secret.cipher';
import { adminClient } from '../back-office/admin-client';
import { ChildService, runServiceUntilExit, ServiceExit, spawnService } from '../support/child-service';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

const EXIT_TIMEOUT_MS = 40_000;
const KEY_1 = '1111111111111111111111111111111111111111111111111111111111111111';
const KEY_2 = '2222222222222222222222222222222222222222222222222222222222222222';
const KEY_ELSEWHERE = '9999999999999999999999999999999999999999999999999999999999999999';

function expectRefused(exit: ServiceExit, ...mentions: string[]) {
  expect(exit.signal).toBeNull();
  expect(exit.code).toBe(78);
  for (const text of mentions) expect(exit.stderr).toContain(text);
  expect(exit.stderr).not.toMatch(/^\s+at /m);
  expect(exit.stdout).not.toContain('listening on');
}

/** `npm run cli -- ...` as a child process, with only this environment and what node needs. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(['PATH', 'HOME', 'TMPDIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER, 'src/cli/main.ts', ...args],
      { cwd: resolve(__dirname, '../..'), env: { ...base, ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A signed balance query: the merchant's secret had to be opened to check it. */
async function balanceStatus(service: ChildService, merchant: TestMerchant): Promise<number> {
  return (await signedFetch({ url: service.url } as RunningService, merchant, { path: '/api/v2/balance' })).status;
}

/** A merchant row sealed under `key`, written straight to the table as another instance would. */
async function insertMerchant(db: TestDatabase, key: string): Promise<TestMerchant> {
  const merchant = {
    merchantId: `mch_${randomBytes(6).toString('hex')}`,
    apiKey: `ak_${randomBytes(16).toString('hex')}`,
    appSecret: randomBytes(32).toString('hex'),
  };
  await db.pool.query(
    `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, rate_limit_per_second, created_by, updated_by)
     values ($1, 'Elsewhere', 'USD', $2, $3, 100, 'test', 'test')`,
    [merchant.merchantId, merchant.apiKey, new AppSecretCipher(Buffer.from(key, 'hex')).encrypt(merchant.appSecret)],
  );
  return merchant;
}

describe('SECRETS_KEY: start-up opens the stored merchant secrets, and the key can be rotated', () => {
  let db: TestDatabase;
  let merchant: TestMerchant;
  let running: ChildService;
  const started: ChildService[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await spawnService(db, env);
    started.push(service);
    return service;
  };
  const production = { NODE_ENV: 'production', UPSTREAM_URL: 'http://127.0.0.1:1', ADMIN_TOKEN: TEST_ENV.ADMIN_TOKEN };
  const withKeys = (current: string, previous?: string) => ({ ...production, SECRETS_KEY: current, ...(previous ? { SECRETS_KEY_PREVIOUS: previous } : {}) });

  beforeAll(async () => {
    db = await createTestDatabase('topup_secrets_key');
    const first = await start(withKeys(KEY_1));
    try {
      const created = await adminClient(first.url).createMerchant();
      merchant = { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
      expect(await balanceStatus(first, merchant)).toBe(200);
    } finally {
      await first.kill('SIGTERM');
    }
  });
  afterAll(async () => {
    // kill() of a service that has already stopped just resolves.
    await Promise.allSettled(started.map((s) => s.kill('SIGTERM')));
    await db.drop();
  });

  it(
    'a new SECRETS_KEY that cannot open the stored secrets stops start-up, naming SECRETS_KEY and SECRETS_KEY_PREVIOUS',
    async () => {
      const exit = await runServiceUntilExit({ ...withKeys(KEY_2), ...db.env, PORT: '0' }, EXIT_TIMEOUT_MS);
      expectRefused(exit, 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS', '1 of 1', merchant.merchantId);
    },
    EXIT_TIMEOUT_MS + 10_000,
  );

  it('SECRETS_KEY=K2 with SECRETS_KEY_PREVIOUS=K1: starts and serves the merchant sealed under K1', async () => {
    running = await start(withKeys(KEY_2, KEY_1));
    expect(running.output()).toMatch(/1 of 1 stored app secrets are sealed under SECRETS_KEY_PREVIOUS.*reseal-secrets/);
    expect(await balanceStatus(running, merchant)).toBe(200);
  });

  it('reseal-secrets re-seals every secret under SECRETS_KEY while the service runs; a second run changes nothing', async () => {
    const env = { ...db.env, ...withKeys(KEY_2, KEY_1) };
    const first = await cli(['reseal-secrets'], env);
    expect(first).toMatchObject({ code: 0 });
    expect(JSON.parse(first.stdout)).toEqual({ secrets: 1, resealed: 1, unopenable: [] });
    const { rows } = await db.pool.query<{ app_secret_enc: Buffer }>('select app_secret_enc from merchants where merchant_id = $1', [merchant.merchantId]);
    expect(new AppSecretCipher(Buffer.from(KEY_2, 'hex')).decrypt(rows[0].app_secret_enc)).toBe(merchant.appSecret);

    const second = await cli(['reseal-secrets'], env);
    expect(second).toMatchObject({ code: 0 });
    expect(JSON.parse(second.stdout)).toEqual({ secrets: 1, resealed: 0, unopenable: [] });
    // The running service still serves the merchant (after its one-second cache of credentials).
    await new Promise((r) => setTimeout(r, 1100));
    expect(await balanceStatus(running, merchant)).toBe(200);
    await running.kill('SIGTERM');
  });

  it(
    'after the reseal, SECRETS_KEY=K2 alone starts and serves; K1 alone no longer opens anything',
    async () => {
      running = await start(withKeys(KEY_2));
      expect(await balanceStatus(running, merchant)).toBe(200);
      await running.kill('SIGTERM');
      const exit = await runServiceUntilExit({ ...withKeys(KEY_1), ...db.env, PORT: '0' }, EXIT_TIMEOUT_MS);
      expectRefused(exit, 'SECRETS_KEY', merchant.merchantId);
    },
    EXIT_TIMEOUT_MS + 30_000,
  );

  it('reseal-secrets refuses to run without SECRETS_KEY', async () => {
    const run = await cli(['reseal-secrets'], { ...db.env });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('SECRETS_KEY');
  });
});

describe('SECRETS_KEY in development', () => {
  let db: TestDatabase;
  let service: ChildService | undefined;
  let stranger: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase('topup_secrets_dev');
  });
  afterAll(async () => {
    await service?.kill('SIGTERM');
    await db.drop();
  });

  it('a merchant whose secret no key opens: its request fails with a log line naming SECRETS_KEY, not a bare crypto message', async () => {
    service = await spawnService(db, { NODE_ENV: 'development' });
    stranger = await insertMerchant(db, KEY_ELSEWHERE);
    expect(await balanceStatus(service, stranger)).toBe(500);
    const output = service.output();
    expect(output).toContain('SECRETS_KEY');
    expect(output).toContain(stranger.merchantId);
    expect(output).not.toMatch(/ERROR.*\n.*Unsupported state or unable to authenticate data/);
    await service.kill('SIGTERM');
  });

  it(
    'start-up stops too (the safe choice), naming SECRETS_KEY',
    async () => {
      const exit = await runServiceUntilExit({ ...TEST_ENV, ...db.env, NODE_ENV: 'development', PORT: '0' }, EXIT_TIMEOUT_MS);
      expectRefused(exit, 'SECRETS_KEY', stranger.merchantId);
    },
    EXIT_TIMEOUT_MS + 10_000,
  );
});
