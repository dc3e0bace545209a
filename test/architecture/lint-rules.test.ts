import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The linters `npm test` runs first would pass vacuously if a rule matched
 * nothing. These cases give each rule a deliberate violation, in a scratch tree
 * laid out like the repository, and check that the rule names it; and that the
 * allowed form of the same import passes.
 */

const ROOT = resolve(__dirname, '../..');
const run = promisify(execFile);

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** Runs dependency-cruiser with the repository's rules over a scratch tree of files. */
async function cruise(files: Record<string, string>): Promise<Violation[]> {
  const dir = mkdtempSync(join(tmpdir(), 'depcruise-'));
  try {
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), source);
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', target: 'ES2022', strict: true } }));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    const bin = join(ROOT, 'node_modules/.bin/depcruise');
    const args = ['src', 'projections', '--config', join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'json'];
    const { stdout } = await run(bin, args, { cwd: dir, maxBuffer: 16 << 20 }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `rule: from -> to`, with a package named from node_modules on (the scratch tree links the repository's). */
const broken = (violations: Violation[]) => violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to.replace(/^.*node_modules\//, 'node_modules/')}`).sort();

/** Runs ESLint with the repository's configuration on a source as if it lived at `path`: its messages. */
async function lintMessages(path: string, source: string): Promise<Array<{ ruleId: string | null; message: string }>> {
  const bin = join(ROOT, 'node_modules/.bin/eslint');
  const child = run(bin, ['--stdin', '--stdin-filename', path, '--format', 'json'], { cwd: ROOT, maxBuffer: 16 << 20 });
  child.child.stdin!.end(source);
  const { stdout } = await child.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const [result] = JSON.parse(stdout) as Array<{ messages: Array<{ ruleId: string | null; message: string }> }>;
  return result.messages;
}

/** The rules a source as if it lived at `path` breaks. */
async function lint(path: string, source: string): Promise<string[]> {
  return (await lintMessages(path, source)).map((m) => m.ruleId ?? 'fatal').sort();
}

describe('the dependency rules (dependency-cruiser)', () => {
  it('names each rule a deliberate violation breaks', async () => {
    const violations = await cruise({
      'src/shared/money.ts': `import { Injectable } from '@nestjs/common';\nexport const money = Injectable;\n`,
      'src/shared/clock.ts': `import { ledger } from '../ledger/order/order-workflow';\nexport const clock = ledger;\n`,
      'src/infrastructure/http/filter.ts': `import { submit } from '../../merchant-api/submit/submit-order.controller';\nexport const filter = submit;\n`,
      'src/config/config.ts': `import { pool } from '../infrastructure/postgres/connection';\nexport const config = pool;\n`,
      'src/infrastructure/postgres/connection.ts': `export const pool = 1;\n`,
      'src/ledger/ledger.module.ts': `import { config } from '../config/config';\nimport { METRICS } from '../infrastructure/metrics/metrics';\nexport const ledger = [config, METRICS];\n`,
      'src/infrastructure/metrics/metrics.ts': `export const METRICS = 1;\n`,
      'src/ledger/order/order-workflow.ts': `import { pool } from '../../infrastructure/postgres/connection';\nimport { worker } from '../../fulfilment/worker/fulfilment-worker';\nexport const ledger = [pool, worker];\n`,
      'src/merchant-api/submit/submit-order.controller.ts': `import { internals } from '../../back-office/merchants/merchants.repository';\nexport const submit = internals;\n`,
      'src/back-office/merchants/merchants.repository.ts': `export const internals = 1;\n`,
      'src/fulfilment/worker/fulfilment-worker.ts': `import { helper } from '../../../test/support/helper';\nexport const worker = helper;\n`,
      'test/support/helper.ts': `export const helper = 1;\n`,
      'src/callbacks/a.ts': `import { b } from './b';\nexport const a = () => b;\n`,
      'src/callbacks/b.ts': `import { a } from './a';\nexport const b = () => a;\n`,
      'projections/orders.projection.ts': `import { directory } from '../src/merchant-directory/merchant-directory';\nexport const orders = directory;\n`,
      'src/merchant-directory/merchant-directory.ts': `export const directory = 1;\n`,
      'src/shared/limits.ts': `import { pool } from '../infrastructure/postgres/connection';\nexport const limits = pool;\n`,
      'src/schema.ts': `import { sessions } from './back-office/auth/console-sessions';\nexport const schema = sessions;\n`,
      'src/back-office/auth/console-sessions.ts': `export const sessions = 1;\n`,
      'src/console/app/pages/merchants.ts': `import { BACK_OFFICE_ROUTES } from '../../../back-office/routes.public';\nexport const page = BACK_OFFICE_ROUTES;\n`,
      'src/back-office/routes.public.ts': `export const BACK_OFFICE_ROUTES = {};\n`,
    });
    expect(broken(violations)).toEqual(
      [
        'capabilities-meet-through-public-files: src/merchant-api/submit/submit-order.controller.ts -> src/back-office/merchants/merchants.repository.ts',
        'config-is-the-bottom: src/config/config.ts -> src/infrastructure/postgres/connection.ts',
        'console-app-imports-only-types-from-the-server: src/console/app/pages/merchants.ts -> src/back-office/routes.public.ts',
        'core-knows-no-capability: src/ledger/order/order-workflow.ts -> src/fulfilment/worker/fulfilment-worker.ts',
        'core-knows-no-infrastructure: src/ledger/ledger.module.ts -> src/config/config.ts',
        'core-knows-no-infrastructure: src/ledger/ledger.module.ts -> src/infrastructure/metrics/metrics.ts',
        'core-knows-no-infrastructure: src/ledger/order/order-workflow.ts -> src/infrastructure/postgres/connection.ts',
        'domain-is-pure: src/shared/clock.ts -> src/ledger/order/order-workflow.ts',
        'domain-is-pure: src/shared/limits.ts -> src/infrastructure/postgres/connection.ts',
        'domain-is-pure: src/shared/money.ts -> node_modules/@nestjs/common/index.js',
        'entry-points-meet-capabilities-through-public-files: src/schema.ts -> src/back-office/auth/console-sessions.ts',
        'no-circular: src/callbacks/a.ts -> src/callbacks/b.ts',
        'plumbing-knows-no-capability: src/infrastructure/http/filter.ts -> src/merchant-api/submit/submit-order.controller.ts',
        'plumbing-knows-no-capability: src/shared/clock.ts -> src/ledger/order/order-workflow.ts',
        'production-code-never-imports-tests: src/fulfilment/worker/fulfilment-worker.ts -> test/support/helper.ts',
        'projections-know-the-core-only: projections/orders.projection.ts -> src/merchant-directory/merchant-directory.ts',
        'shared-knows-no-infrastructure: src/shared/limits.ts -> src/infrastructure/postgres/connection.ts',
      ].sort(),
    );
  });

  it('lets capabilities and the top-level files reach a capability through its public files, the core through its ports, and the console the server’s types', async () => {
    const violations = await cruise({
      'src/merchant-directory/index.ts': `export { directory } from './merchant-directory';\n`,
      'src/merchant-directory/merchant-directory.ts': `export const directory = 1;\n`,
      'src/merchant-api/gateway/gateway.ts': `import { directory } from '../../merchant-directory';\nimport { port } from '../../ledger/ports/event-store.port';\nexport const gateway = [directory, port];\n`,
      'src/ledger/ports/event-store.port.ts': `export const port = 1;\n`,
      'src/infrastructure/event-store/postgres-event-store.ts': `import { port } from '../../ledger/ports/event-store.port';\nexport const store = port;\n`,
      'src/shared/money.ts': `import { createHash } from 'node:crypto';\nexport const money = createHash;\n`,
      'projections/orders.projection.ts': `import { port } from '../src/ledger/ports/event-store.port';\nimport { money } from '../src/shared/money';\nexport const orders = [port, money];\n`,
      'src/schema.ts': `import { directory } from './merchant-directory';\nimport { routes } from './merchant-api/routes.public';\nimport { gateway } from './merchant-api/merchant-api.module';\nexport const schema = [directory, routes, gateway];\n`,
      'src/merchant-api/routes.public.ts': `export const routes = 1;\n`,
      'src/merchant-api/merchant-api.module.ts': `export { gateway } from './gateway/gateway';\n`,
      // The console's script takes the server's reply types, and only types.
      'src/console/app/pages/merchants.ts': `import type { MerchantView } from '../../../back-office/replies.public';\nimport { h } from '../dom';\nexport const page = (m: MerchantView) => h(m.name);\n`,
      'src/console/app/dom.ts': `export const h = (text: string) => text;\n`,
      'src/console/app/replies.ts': `export type * from '../../back-office/replies.public';\n`,
      'src/back-office/replies.public.ts': `export interface MerchantView {\n  name: string;\n}\n`,
    });
    expect(broken(violations)).toEqual([]);
  });
});

describe('the lint rules (ESLint)', () => {
  it('refuses a driver and SQL in a controller', async () => {
    const source = `import { Pool } from 'pg';\nexport const list = (pool: Pool) => pool.query('select id from merchants where id = $1', ['m']);\n`;
    expect(await lint('src/back-office/merchants/merchants.controller.ts', source)).toEqual(['no-restricted-imports', 'no-restricted-syntax']);
    expect(await lint('src/back-office/merchants/merchants.repository.ts', source)).toEqual([]);
  });

  it("refuses Nest's @Query in a controller: query strings are read with @QueryString", async () => {
    const source = "import { Get, Query } from '@nestjs/common';\nexport const decorators = [Get, Query];\n";
    expect(await lint('src/back-office/orders/orders.controller.ts', source)).toEqual(['no-restricted-imports']);
    expect(await lint('src/back-office/orders/orders.controller.ts', "import { Get } from '@nestjs/common';\nexport const decorators = [Get];\n")).toEqual([]);
  });

  it('lets only the owning query code read the read models', async () => {
    const source = 'export const sql = `select order_no from rm_orders where merchant_id = $1`;\n';
    expect(await lint('src/back-office/orders/orders.service.ts', source)).toEqual(['no-restricted-syntax']);
    // A slice's reader calls the owner now, like any other file.
    expect(await lint('src/back-office/orders/orders.reader.ts', source)).toEqual(['no-restricted-syntax']);
    expect(await lint('projections/orders.queries.ts', source)).toEqual([]);
  });

  describe('gives each projection-owned table one owner', () => {
    /** A statement on each owned table, in the forms SQL reaches a table: from, join, into, update, table. */
    const STATEMENTS: Record<string, string> = {
      rm_orders: 'select order_no from rm_orders where merchant_id = $1',
      rm_wallets: 'select balance from rm_wallets where merchant_id = $1',
      rm_wallet_holds: 'select 1 from rm_orders o join rm_wallet_holds h on h.order_no = o.order_no',
      rm_statement_lines: 'insert into rm_statement_lines (merchant_id) values ($1)',
      rm_wallet_snapshots: 'delete from rm_wallet_snapshots where merchant_id = $1',
      callback_deliveries: 'update callback_deliveries set lease_until = null where order_no = $1',
      callback_attempts: 'create table callback_attempts (order_no text)',
      fulfilment_jobs: 'update fulfilment_jobs set attempts = attempts + 1 where order_no = $1',
      projection_checkpoints: 'select name from projection_checkpoints where name = any($1)',
      es_events: 'select created_at from es_events e where e.stream_id = $1',
    };
    const TABLES = Object.keys(STATEMENTS);
    // One template and one string per table: the rule reads both.
    const source = Object.values(STATEMENTS)
      .map((sql, i) => (i % 2 === 0 ? `export const s${i} = \`${sql}\`;\n` : `export const s${i} = '${sql}';\n`))
      .join('');
    /** The tables the rule names in the source as if it lived at `path`, in TABLES' order. */
    const refused = async (path: string) => {
      const messages = await lintMessages(path, source);
      expect(messages.map((m) => m.ruleId)).toEqual(messages.map(() => 'no-restricted-syntax'));
      const named = new Set(messages.map((m) => m.message.split(' ')[0]));
      return TABLES.filter((table) => named.has(table));
    };
    const allBut = (...owned: string[]) => TABLES.filter((table) => !owned.includes(table));

    it.each([
      ['src/callbacks/callback-worker.ts'],
      ['src/fulfilment/worker/fulfilment-worker.ts'],
      ['src/auditing/verification/read-model-tables.ts'],
      ['projections/orders.projection.ts'],
    ])('refuses every table in %s, which owns none', async (path) => {
      expect(await refused(path)).toEqual(TABLES);
    });

    it.each([
      ['projections/orders.queries.ts', ['rm_orders']],
      ['projections/wallets.queries.ts', ['rm_wallets', 'rm_wallet_holds', 'rm_statement_lines', 'rm_wallet_snapshots', 'rm_orders']],
      ['projections/callback-schedule.queries.ts', ['callback_deliveries', 'callback_attempts']],
      ['projections/callback-claims.queries.ts', ['callback_deliveries', 'callback_attempts', 'rm_orders']],
      ['projections/callback-log.queries.ts', ['callback_deliveries', 'callback_attempts']],
      ['projections/fulfilment-jobs.queries.ts', ['fulfilment_jobs']],
      ['projections/checkpoints.ts', ['projection_checkpoints']],
      ['src/callbacks/callbacks.migrations.ts', ['callback_attempts']],
      ['src/infrastructure/event-store/postgres-event-store.ts', ['es_events']],
      ['src/infrastructure/event-store/postgres-event-rows.ts', ['es_events']],
    ])('lets %s name only the tables it owns, joins or creates', async (path, own) => {
      expect(await refused(path)).toEqual(allBut(...own));
    });

    it("names the owner in the message, and leaves a table's name outside SQL alone", async () => {
      const [message] = await lintMessages('src/back-office/orders/orders.service.ts', "export const sql = 'select * from fulfilment_jobs';\n");
      expect(message.message).toContain('projections/fulfilment-jobs.queries.ts');
      const [log] = await lintMessages('projections/wallets.queries.ts', "export const sql = 'select e.metadata from es_events e';\n");
      expect(log.message).toContain('read events through the event-store port');
      const label = "export const tables = ['rm_orders', 'fulfilment_jobs'];\nexport const report = { table: 'rm_wallet_holds' };\n";
      expect(await lint('src/auditing/verification/differences.ts', label)).toEqual([]);
    });
  });

  it('refuses in the console every way of parsing text as HTML', async () => {
    const source = [
      'export function show(el: Element, text: string) {',
      '  el.innerHTML = text;',
      "  el.insertAdjacentHTML('beforeend', text);",
      "  el['outerHTML'] = text;",
      '  document.write(text);',
      "  return new DOMParser().parseFromString(text, 'text/html');",
      '}',
      '',
    ].join('\n');
    expect(await lint('src/console/app/pages/orders.ts', source)).toEqual([
      'no-restricted-globals',
      'no-restricted-properties',
      'no-restricted-properties',
      'no-restricted-properties',
      'no-restricted-properties',
    ]);
    expect(await lint('src/console/console.controller.ts', 'export const page = (el: { innerHTML: string }) => el.innerHTML;\n')).toEqual([
      'no-restricted-properties',
    ]);
    // Text is text: h() and textContent make text nodes.
    expect(await lint('src/console/app/pages/orders.ts', 'export const show = (el: Element, text: string) => (el.textContent = text);\n')).toEqual([]);
  });

  it('allows one import statement per module', async () => {
    const source = `import { a } from './x';\nimport { b } from './x';\nexport const c = [a, b];\n`;
    expect(await lint('src/ledger/streams.ts', source)).toEqual(['no-duplicate-imports']);
  });
});
