import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat as fsStat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFile } from 'node:child_process';
import { provisionDemo } from '../../scripts/demo';
import { MerchantClient } from '../../src/merchant-client';
import { ChildService, freePort, spawnServiceWithOnly } from '../support/child-service';
import { isAlive } from '../../src/infrastructure/postgres/embedded/embedded-postgres';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

/**
 * `npm start` on a machine with Node.js alone: no DATABASE_URL, no PG*, no
 * ADMIN_TOKEN or SECRETS_KEY, and nothing answering where Postgres would be
 * (the probe points at a closed port, so this runs the same beside the
 * machine's own Postgres). The service starts an embedded PostgreSQL in
 * DATA_DIR, and a restart finds the same data and the same secrets.
 */
describe('zero-install start: the embedded PostgreSQL', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let service: ChildService | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'topup-zero-install-'));
    // Run as root, Postgres runs as the postgres user, who must reach the data.
    await chmod(dataDir, 0o755);
    env = { EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`, DATA_DIR: dataDir, NO_COLOR: '1', UPSTREAM_SIM_DELAY_MS: '50' };
  });

  afterAll(async () => {
    await service?.kill('SIGTERM');
    await postgresStopped(join(dataDir, 'postgres'));
    await rm(dataDir, { recursive: true, force: true });
  });

  const secrets = () => JSON.parse(readFileSync(join(dataDir, 'development-secrets.json'), 'utf8')) as Record<string, string>;
  let merchant: { merchantId: string; apiKey: string; appSecret: string };
  let client: MerchantClient;

  it('starts on a fresh machine, says which database it uses and where its data lives, and accepts a signed submit', async () => {
    service = await spawnServiceWithOnly(env);
    const log = service.output();
    expect(log).toContain('database: embedded PostgreSQL on 127.0.0.1:');
    expect(log).toContain(`data in ${join(dataDir, 'postgres')}`);
    expect(log).toContain(`nothing answers on ${env.EMBEDDED_POSTGRES_PROBE}`);
    expect(log).toContain(`ADMIN_TOKEN and SECRETS_KEY not set: generated and kept in ${join(dataDir, 'development-secrets.json')}`);
    expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect((await stat(join(dataDir, 'development-secrets.json'))) & 0o077).toBe(0);

    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
    merchant = await provisionDemo(service.url, secrets().ADMIN_TOKEN);
    client = new MerchantClient({ baseUrl: service.url, apiKey: merchant.apiKey, appSecret: merchant.appSecret });
    const submitted = await client.submit({ out_trade_no: 'zero-1', sku_id: 'demo-gems-100', account_id: '12345678', account_fields: { server_id: '2001' } });
    expect(submitted.status).toBe(202);
    expect(submitted.body).toMatchObject({ success: true, code: 'ACCEPTED', data: { out_trade_no: 'zero-1', amount: '1.20' } });
  });

  it('the CLI, while the service runs, uses its embedded PostgreSQL and says so on stderr', async () => {
    const port = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]);
    const run = await cli(['balance-as-of', merchant.merchantId], env);
    expect(run.stderr).toBe(
      `database: the embedded PostgreSQL of ${join(dataDir, 'postgres')}, running on 127.0.0.1:${port}, database "topup", user "postgres" (DATABASE_URL and PG* are not set)\n`,
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ merchant_id: merchant.merchantId });
    expect(run.stderr).not.toContain(secrets().EMBEDDED_POSTGRES_PASSWORD);
  });

  it('stops its PostgreSQL with the service', async () => {
    const pid = await postmasterPid(join(dataDir, 'postgres'));
    expect(isAlive(pid)).toBe(true);
    await service!.kill('SIGTERM');
    service = undefined;
    await postgresStopped(join(dataDir, 'postgres'));
    for (const deadline = Date.now() + 10_000; isAlive(pid) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(pid)).toBe(false);
  });

  it('the CLI, with the service stopped, starts the embedded PostgreSQL for its run and stops it afterwards', async () => {
    const run = await cli(['balance-as-of', merchant.merchantId], env);
    expect(run.stderr).toMatch(
      new RegExp(
        `^database: the embedded PostgreSQL of ${escape(join(dataDir, 'postgres'))}, started on 127\\.0\\.0\\.1:\\d+ until this command ends, database "topup", user "postgres" \\(DATABASE_URL and PG\\* are not set\\)\n$`,
      ),
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ merchant_id: merchant.merchantId });
    await postgresStopped(join(dataDir, 'postgres'));
  });

  it('restarted, keeps the data and the secrets: the same merchant still works', async () => {
    const before = secrets();
    service = await spawnServiceWithOnly(env);
    expect(service.output()).toContain(`ADMIN_TOKEN and SECRETS_KEY not set: kept in ${join(dataDir, 'development-secrets.json')}`);
    expect(secrets()).toEqual(before);
    client = new MerchantClient({ baseUrl: service.url, apiKey: merchant.apiKey, appSecret: merchant.appSecret });

    const queried = await client.query({ out_trade_no: 'zero-1' });
    expect(queried.body).toMatchObject({ success: true, data: { out_trade_no: 'zero-1' } });
    const again = await client.submit({ out_trade_no: 'zero-2', sku_id: 'demo-voucher-10', account_id: '12345678', account_fields: {} });
    expect(again.body).toMatchObject({ success: true, code: 'ACCEPTED' });
    const admin = await fetch(`${service.url}/admin/v1/merchants/${merchant.merchantId}`, { headers: { authorization: `Bearer ${before.ADMIN_TOKEN}` } });
    expect(admin.status).toBe(200);
  });
});

async function stat(file: string): Promise<number> {
  return (await fsStat(file)).mode;
}

/** The operators' CLI as `npm run cli` runs it, with nothing of this process's database settings. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('PG')));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER, 'src/cli/main.ts', ...args],
      { cwd: resolve(__dirname, '../..'), env: { ...inherited, ...env } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** The server removes its postmaster.pid as the last step of a clean shutdown. */
async function postgresStopped(dataDir: string, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; existsSync(join(dataDir, 'postmaster.pid')); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL in ${dataDir} did not stop within ${timeoutMs / 1000} s`);
  }
}
