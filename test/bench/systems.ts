/**
 * The three systems the benchmark compares, each a child process ready for
 * load, with "many" merchants for the spread scenarios and one more for the
 * hot wallet: the service on a fresh database, the conventional CRUD server
 * on another, and the bare node:http + HMAC baseline with no database.
 */
import { randomBytes } from 'node:crypto';
import { parseAmount } from '../../src/shared/money';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { log, onCleanUp } from './clean-up';
import { crudSmokeCheck } from './crud-check';
import { provisionCrud } from './crud-store';
import { Credentials } from './load-generator';
import { Child, startListening } from './processes';
import { DEPOSIT, PRICE, SKU_ID, startProvisionedService } from './service';
import { Settings, SystemName } from './settings';

export interface System {
  name: SystemName;
  /** How the report names it. */
  label: string;
  child: Child;
  url: string;
  /** Its database: the Postgres work and commits counted for it. None for the bare baseline. */
  db?: TestDatabase;
  many: Credentials[];
  hot: Credentials;
}

export const LABELS: Record<SystemName, string> = {
  service: 'service',
  crud: 'CRUD (pg, 1 transaction)',
  bare: 'bare node:http + HMAC',
};

export async function freshDatabase(prefix: string): Promise<TestDatabase> {
  const db = await createTestDatabase(prefix);
  onCleanUp(`drop the database ${db.name}`, async () => {
    await db.drop();
    log(`dropped the database ${db.name}`);
  });
  log(`database ${db.name}`);
  return db;
}

export function startSystem(name: SystemName, settings: Settings): Promise<System> {
  switch (name) {
    case 'service':
      return startServiceSystem(settings);
    case 'crud':
      return startCrud(settings);
    case 'bare':
      return startBare(settings);
    default: {
      const never: never = name;
      throw new Error(`unknown system ${String(never)}`);
    }
  }
}

async function startServiceSystem(settings: Settings): Promise<System> {
  const db = await freshDatabase('topup_bench');
  // Fulfilment off unless asked for: the submit figures are the submit path and its projections.
  // With fulfilment off every accepted order waits: the backlog policy, which would refuse submits, goes off with it.
  const env: NodeJS.ProcessEnv = settings.withFulfilment ? {} : { FULFILMENT_CONCURRENCY: '0', INTAKE_MAX_WAITING: '0', INTAKE_MAX_WAIT_S: '0' };
  if (settings.cpuProfDir) env.BENCH_CPU_PROF_DIR = settings.cpuProfDir;
  const { service, merchants } = await startProvisionedService('service', db, { env, merchants: settings.merchants + 1 });
  log(`service up at ${service.url}, ${merchants.length} merchants provisioned`);
  return { name: 'service', label: LABELS.service, child: service.child, url: service.url, db, ...split(merchants, settings) };
}

async function startCrud(settings: Settings): Promise<System> {
  const db = await freshDatabase('topup_bench_crud');
  const merchants = newCredentials(settings.merchants + 2);
  const unfunded = merchants.pop()!;
  await provisionCrud(
    db.pool,
    [...merchants.map((m) => ({ ...m, balance: parseAmount(DEPOSIT)! })), { ...unfunded, balance: 0n }],
    SKU_ID,
    parseAmount(PRICE)!,
  );
  const child = await startListening('CRUD server', 'test/bench/crud-server.ts', { ...process.env, ...db.env, PORT: '0' }, 'CRUD');
  await crudSmokeCheck(child.url, merchants[0], unfunded, SKU_ID);
  log(`CRUD server up at ${child.url}, ${merchants.length} merchants; self-check passed`);
  return { name: 'crud', label: LABELS.crud, child: child.child, url: child.url, db, ...split(merchants, settings) };
}

async function startBare(settings: Settings): Promise<System> {
  const merchants = newCredentials(settings.merchants + 1);
  const env = { ...process.env, PORT: '0', BASELINE_CREDENTIALS: JSON.stringify(merchants) };
  const child = await startListening('baseline', 'test/bench/baseline-server.ts', env, 'BASELINE');
  return { name: 'bare', label: LABELS.bare, child: child.child, url: child.url, ...split(merchants, settings) };
}

export function newCredentials(count: number): Credentials[] {
  return Array.from({ length: count }, () => ({ apiKey: `ak_${randomBytes(16).toString('hex')}`, appSecret: randomBytes(32).toString('hex') }));
}

const split = (merchants: Credentials[], settings: Settings) => ({ many: merchants.slice(0, settings.merchants), hot: merchants[settings.merchants] });
