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

/** Runs ESLint with the repository's configuration on a source as if it lived at `path`. */
async function lint(path: string, source: string): Promise<string[]> {
  const bin = join(ROOT, 'node_modules/.bin/eslint');
  const child = run(bin, ['--stdin', '--stdin-filename', path, '--format', 'json'], { cwd: ROOT, maxBuffer: 16 << 20 });
  child.child.stdin!.end(source);
  const { stdout } = await child.catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const [result] = JSON.parse(stdout) as Array<{ messages: Array<{ ruleId: string | null }> }>;
  return result.messages.map((m) => m.ruleId ?? 'fatal').sort();
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
      'projections/orders.projection.ts': `import { directory } from '../src/merchants/merchant-directory';\nexport const orders = directory;\n`,
      'src/merchants/merchant-directory.ts': `export const directory = 1;\n`,
    });
    expect(broken(violations)).toEqual(
      [
        'capabilities-meet-through-public-files: src/merchant-api/submit/submit-order.controller.ts -> src/back-office/merchants/merchants.repository.ts',
        'config-is-the-bottom: src/config/config.ts -> src/infrastructure/postgres/connection.ts',
        'core-knows-no-capability: src/ledger/order/order-workflow.ts -> src/fulfilment/worker/fulfilment-worker.ts',
        'core-knows-no-infrastructure: src/ledger/ledger.module.ts -> src/config/config.ts',
        'core-knows-no-infrastructure: src/ledger/ledger.module.ts -> src/infrastructure/metrics/metrics.ts',
        'core-knows-no-infrastructure: src/ledger/order/order-workflow.ts -> src/infrastructure/postgres/connection.ts',
        'domain-is-pure: src/shared/clock.ts -> src/ledger/order/order-workflow.ts',
        'domain-is-pure: src/shared/money.ts -> node_modules/@nestjs/common/index.js',
        'no-circular: src/callbacks/a.ts -> src/callbacks/b.ts',
        'plumbing-knows-no-capability: src/infrastructure/http/filter.ts -> src/merchant-api/submit/submit-order.controller.ts',
        'plumbing-knows-no-capability: src/shared/clock.ts -> src/ledger/order/order-workflow.ts',
        'production-code-never-imports-tests: src/fulfilment/worker/fulfilment-worker.ts -> test/support/helper.ts',
        'projections-know-the-core-only: projections/orders.projection.ts -> src/merchants/merchant-directory.ts',
      ].sort(),
    );
  });

  it('lets a capability use another through its public file, and the core through its ports', async () => {
    const violations = await cruise({
      'src/merchants/index.ts': `export { directory } from './merchant-directory';\n`,
      'src/merchants/merchant-directory.ts': `export const directory = 1;\n`,
      'src/merchant-api/gateway/gateway.ts': `import { directory } from '../../merchants';\nimport { port } from '../../ledger/ports/event-store.port';\nexport const gateway = [directory, port];\n`,
      'src/ledger/ports/event-store.port.ts': `export const port = 1;\n`,
      'src/infrastructure/event-store/postgres-event-store.ts': `import { port } from '../../ledger/ports/event-store.port';\nexport const store = port;\n`,
      'src/shared/money.ts': `import { createHash } from 'node:crypto';\nexport const money = createHash;\n`,
      'projections/orders.projection.ts': `import { port } from '../src/ledger/ports/event-store.port';\nimport { money } from '../src/shared/money';\nexport const orders = [port, money];\n`,
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

  it('lets only the owning query code read the read models', async () => {
    const source = 'export const sql = `select order_no from rm_orders where merchant_id = $1`;\n';
    expect(await lint('src/back-office/orders/orders.service.ts', source)).toEqual(['no-restricted-syntax']);
    expect(await lint('src/back-office/orders/orders.reader.ts', source)).toEqual([]);
    expect(await lint('projections/orders.queries.ts', source)).toEqual([]);
  });

  it('allows one import statement per module', async () => {
    const source = `import { a } from './x';\nimport { b } from './x';\nexport const c = [a, b];\n`;
    expect(await lint('src/ledger/streams.ts', source)).toEqual(['no-duplicate-imports']);
  });
});
