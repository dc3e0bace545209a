import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { formatPosition } from '../../src/ledger/ports/event-store.port';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { walletStream } from '../../src/ledger/streams';
import { orderInput } from '../support/fixtures';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { handFold } from '../support/expectations';
import { freePort } from '../support/child-service';
import { runCli } from '../../src/cli/main';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

const ROOT = resolve(__dirname, '../..');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without the parent's database settings, so the test database's win. */
function baseEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('PG')));
}

function cli(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...TYPESCRIPT_LOADER, 'src/cli/main.ts', ...args],
      { cwd: ROOT, env: { ...baseEnv(), ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The same CLI in this process: what main.ts would print and exit with, without a process start per case. */
async function cliInProcess(args: string[], env: Record<string, string>): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, { ...baseEnv(), ...env }, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

/** RFC 4180, enough for the statement: quoted cells may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

describe("the operators' and auditors' CLI (src/cli/main.ts), as a child process", () => {
  let db: TestDatabase;
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    ({ db, service, teardown } = await serviceOnFreshDatabase());
    env = { ...TEST_ENV, ...db.env };
    dir = await mkdtemp(join(tmpdir(), 'topup-cli-'));
    merchant = await provisionMerchant(service, { deposit: 50_000n });
    for (let i = 0; i < 120; i++) {
      if (i % 30 === 0) await service.commands.execute(new DepositFunds(merchant.merchantId, `cli-top-up-${i}`, 2_000n, 'ops'));
      const result = await service.commands.execute(new SubmitOrder(orderInput(merchant.merchantId, `CLI-${i}`, { amount: BigInt(70 + i) })));
      if (result.outcome !== 'accepted') continue;
      if (i % 3 === 0) await service.commands.execute(new SettleOrder(result.order.order!.orderNo));
      if (i % 3 === 1) await service.commands.execute(new ReleaseFunds(result.order.order!.orderNo, 'INVALID_ACCOUNT', 'no such account'));
    }
    await service.catchUp();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
    await teardown();
  });

  it('verify: exit 0 and a clean report', async () => {
    const run = await cli(['verify', '--progress-every', '100'], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ clean: true, differences: [], differences_total: 0 });
    expect(report.events_checked).toBeGreaterThan(400);
    expect(report.last_position).toMatch(/^\d+\/\d+$/);
    expect(run.stderr).toMatch(/verify: \d+ events \(\d+ events\/s\)/);
    expect(run.stderr).toMatch(/clean up to \d+\/\d+/);
  });

  it('verify --scope wallet: the wallet alone, exit 0 and a clean report of its events', async () => {
    const run = await cli(['verify', '--merchant', merchant.merchantId, '--scope', 'wallet'], env);
    expect(run.code).toBe(0);
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(JSON.parse(run.stdout)).toMatchObject({ clean: true, merchant_id: merchant.merchantId, events_checked: events.length });
  });

  it('verify: exit 1 naming the difference when a read model was altered', async () => {
    await service.pool.query('update rm_wallets set frozen = frozen + 5 where merchant_id = $1', [merchant.merchantId]);
    try {
      const run = await cli(['verify', '--merchant', merchant.merchantId], env);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout);
      expect(report.differences.map((d: { table: string; column: string }) => `${d.table}.${d.column}`)).toEqual(['rm_wallets.frozen']);
    } finally {
      await service.pool.query('update rm_wallets set frozen = frozen - 5 where merchant_id = $1', [merchant.merchantId]);
    }
  });

  it('statement --format csv --out FILE: the last balance equals the balance endpoint', async () => {
    const file = join(dir, 'statement.csv');
    const run = await cli(['statement', merchant.merchantId, '--format', 'csv', '--out', file], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    const [header, ...lines] = parseCsv(await readFile(file, 'utf8'));
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(lines).toHaveLength(events.length);
    expect(run.stderr).toContain(`wrote ${events.length} lines to ${file}`);
    const last = Object.fromEntries(header.map((column, i) => [column, lines[lines.length - 1][i]]));
    const balance = (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
    expect({ balance: last.balance_after, frozen_balance: last.frozen_after, available_balance: last.available_after }).toEqual({
      balance: balance.balance,
      frozen_balance: balance.frozen_balance,
      available_balance: balance.available_balance,
    });
    expect(JSON.parse(last.data)).toEqual(events[events.length - 1].data);

    const json = await cli(['statement', merchant.merchantId, '--from', events[10].createdAt.toISOString()], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).lines[0].revision).toBeLessThanOrEqual(10);
  });

  it('balance-as-of --at and --position match a hand fold of the events up to there', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    const cut = events[Math.floor(events.length / 2)];
    const at = await cli(['balance-as-of', merchant.merchantId, '--at', cut.createdAt.toISOString()], env);
    expect(at.code).toBe(0);
    expect(JSON.parse(at.stdout)).toMatchObject(handFold(events.filter((e) => e.createdAt <= cut.createdAt)));

    const byPosition = await cli(['balance-as-of', merchant.merchantId, '--position', formatPosition(cut.position)], env);
    expect(byPosition.code).toBe(0);
    expect(JSON.parse(byPosition.stdout)).toMatchObject({
      ...handFold(events.slice(0, events.indexOf(cut) + 1)),
      last_revision: Number(cut.revision),
      last_position: formatPosition(cut.position),
    });

    const now = await cli(['balance-as-of', merchant.merchantId], env);
    expect(now.code).toBe(0);
    expect(JSON.parse(now.stdout)).toMatchObject({ ...handFold(events), events_applied: events.length });
  });

  it('rebuild: exit 0 with progress on stderr, the service answering from the rebuilt tables', async () => {
    const run = await cli(['rebuild', '--progress-every', '200'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/rebuild orders: \d+ events \(\d+ events\/s\)/);
    expect(run.stderr).toMatch(/rebuild wallets: \d+ events in [\d.]+ s \(\d+ events\/s\); swapped in at \d+\/\d+/);
    expect(JSON.parse(run.stdout).map((r: { projection: string }) => r.projection)).toEqual(['orders', 'wallets', 'order-minutes']);
    expect((await signedFetch(service, merchant, { path: '/api/v2/balance' })).status).toBe(200);
    expect((await cli(['verify'], env)).code).toBe(0);
  });

  it('needs neither ADMIN_TOKEN nor SECRETS_KEY, even in production', async () => {
    const run = await cli(['balance-as-of', merchant.merchantId, '--position', '999999999/0'], { ...db.env, NODE_ENV: 'production' });
    expect(run.stderr).toMatch(/^database: [^\n]*\n$/);
    expect(run.code).toBe(0);
  });

  it('says on stderr, in one line, which database it uses and why, never its password', async () => {
    const c = db.config;
    const url = new URL(c.connectionString ?? `postgres://${c.user}:${encodeURIComponent(String(c.password ?? ''))}@${c.host}:${c.port}/${c.database}`);
    const [host, port, user, password] = [url.hostname, url.port || '5432', decodeURIComponent(url.username), decodeURIComponent(url.password)];
    const byUrl = await cli(['balance-as-of', merchant.merchantId], { ...TEST_ENV, DATABASE_URL: url.href });
    expect(byUrl.code).toBe(0);
    expect(byUrl.stderr).toBe(`database: PostgreSQL at ${host}:${port}, database "${db.name}", user "${user}" (from DATABASE_URL)\n`);

    const pg = { PGHOST: host, PGPORT: port, PGUSER: user, PGPASSWORD: password, PGDATABASE: db.name };
    const byPg = await cli(['balance-as-of', merchant.merchantId], { ...TEST_ENV, ...pg });
    expect(byPg.code).toBe(0);
    expect(byPg.stderr).toBe(
      `database: PostgreSQL at ${host}:${port}, database "${db.name}", user "${user}" (from PGHOST/PGPORT/PGUSER/PGDATABASE (DATABASE_URL is not set))\n`,
    );
    if (password) for (const run of [byUrl, byPg]) expect(run.stderr).not.toContain(password);
  });

  it('with no database configured, nothing answering on the probe and no embedded PostgreSQL in DATA_DIR: says so, exit 3, creates nothing', async () => {
    const dataDir = join(dir, 'no-data');
    const run = await cli(['verify'], { ...TEST_ENV, DATA_DIR: dataDir, EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}` });
    expect(run.code).toBe(3);
    expect(run.stderr).toBe(
      `no database: DATABASE_URL and PG* are not set, nothing answers on 127.0.0.1:${run.stderr.match(/127\.0\.0\.1:(\d+)/)![1]}, ` +
        `and ${join(dataDir, 'postgres')} holds no embedded PostgreSQL (\`npm start\` sets one up on its first start): set DATABASE_URL, or start the service once\n`,
    );
    expect(existsSync(dataDir)).toBe(false);
  });

  it('statement --out FILE: a relative FILE is taken from the directory npm was run in (INIT_CWD); a missing directory is named by its absolute path', async () => {
    const run = await cli(['statement', merchant.merchantId, '--out', 'relative.json'], { ...env, INIT_CWD: dir });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(`wrote `);
    expect(run.stderr).toContain(` lines to ${join(dir, 'relative.json')}\n`);
    expect(JSON.parse(await readFile(join(dir, 'relative.json'), 'utf8')).lines.length).toBeGreaterThan(0);

    const missing = await cli(['statement', merchant.merchantId, '--out', 'absent/statement.json'], { ...env, INIT_CWD: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot write ${join(dir, 'absent', 'statement.json')}: no such directory\n`);
  });

  it('usage errors exit 2 with a clear message', async () => {
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command "frobnicate"/],
      [[], /usage: cli <command>/],
      [['balance-as-of', merchant.merchantId, '--at', '2026-11-22T10:00:00Z', '--position', '1/1'], /--at or --position, not both/],
      [['balance-as-of', merchant.merchantId, '--at', 'yesterday'], /--at must be an ISO 8601 time/],
      [['statement', merchant.merchantId, '--format', 'xml'], /--format must be one of json, csv/],
      [['statement'], /MERCHANT_ID is required/],
      [['verify', '--merchant'], /--merchant needs a value/],
      [['verify', '--colour', 'red'], /unknown option --colour/],
      [['verify', '--scope', 'wallet'], /--scope needs --merchant/],
      [['verify', '--merchant', merchant.merchantId, '--scope', 'all'], /--scope must be one of merchant, wallet/],
      [['balance-as-of', merchant.merchantId, '--at', '2026-01-01T00:00:00Z', '--replay', 'half'], /--replay must be one of snapshots, full/],
      [['rebuild', '--projection', 'fulfilment'], /--projection must be one of orders, wallets/],
      [['statement', 'mch_nobody'], /no wallet for merchant mch_nobody/],
    ];
    // One as a process, for the exit code main.ts gives it; the rest in this process, one start each being dear.
    const runs = await Promise.all(cases.map(([args], i) => (i === 0 ? cli : cliInProcess)(args, env)));
    for (const [i, [args, message]] of cases.entries()) {
      expect({ args, code: runs[i].code }).toEqual({ args, code: 2 });
      expect(runs[i].stderr).toMatch(message);
    }
    const help = await cliInProcess(['help', 'statement'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: cli statement MERCHANT_ID');
  });

  it('says so when the schema is missing, and creates nothing', async () => {
    const empty = await createTestDatabase();
    try {
      const run = await cli(['verify'], { ...TEST_ENV, ...empty.env });
      expect(run.code).toBe(3);
      expect(run.stderr).toMatch(/the database has no es_events, .*start the service once/);
      const { rows } = await empty.pool.query(`select count(*)::int as n from pg_tables where schemaname = 'public'`);
      expect(rows[0].n).toBe(0);
    } finally {
      await empty.drop();
    }
  });
});
