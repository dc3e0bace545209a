/**
 * `npm run bench:appends`: what an order costs when its events reach the log
 * in one atomic append (Postgres: OrderPlaced, OrderAccepted and FundsFrozen
 * in one transaction) against step by step, as on a store that appends one
 * stream at a time (EventStoreDB 6.x): the same service on the same Postgres,
 * its atomic appends hidden. Each pass runs both modes, each in a process of
 * its own on a fresh database: closed-loop SubmitOrder commands (no HTTP),
 * fulfilment and callbacks off, then submits a second, Postgres commits and
 * WAL bytes per order.
 *
 * Settings: --duration (DURATION_S, 10), --passes (PASSES, 2),
 * --concurrency (CONCURRENCY, 32), --merchants (MERCHANTS, 20).
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { CommandBus } from '@nestjs/cqrs';
import { loadConfig } from '../../src/config/config';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { bootstrap } from '../../src/main';
import { TEST_ENV } from '../support/service';
import { log } from './clean-up';
import { numberOption } from './settings';
import { freshDatabase } from './systems';
import { table } from './tables';

type Mode = 'atomic' | 'step by step';
interface Measured {
  mode: Mode;
  orders: number;
  seconds: number;
  commits: number;
  walBytes: number;
}

const option = (name: string, variable: string, fallback: number) => numberOption(process.argv, process.env, name, variable, fallback);

/** One mode, in this process: the service in-process, a closed loop of submits. */
async function measure(mode: Mode, durationS: number, concurrency: number, merchantCount: number): Promise<Measured> {
  if (mode === 'step by step') {
    // Chosen at start-up (orderAppendsFor): without appendAtomically, orders go step by step.
    Object.defineProperty(PostgresEventStore.prototype, 'appendAtomically', { value: undefined });
  }
  const { config } = loadConfig({ ...process.env, ...TEST_ENV });
  const app = await bootstrap(config);
  const commands = app.get(CommandBus);
  const merchants = Array.from({ length: merchantCount }, (_, i) => `bench-${i}`);
  for (const merchantId of merchants) {
    await commands.execute(new OpenWallet(merchantId, 'USD'));
    await commands.execute(new DepositFunds(merchantId, 'float', 10_000_000_000n, 'bench'));
  }
  const { Client } = await import('pg');
  const db = new Client(config.database);
  await db.connect();
  const reading = async () => {
    const { rows } = await db.query<{ commits: string; lsn: string }>(
      'select xact_commit::text as commits, pg_current_wal_lsn()::text as lsn from pg_stat_database where datname = current_database()',
    );
    return rows[0];
  };
  let next = 0;
  const loop = async (until: number) => {
    while (Date.now() < until) {
      const i = next++;
      await commands.execute(
        new SubmitOrder({
          merchantId: merchants[i % merchants.length],
          outTradeNo: `bench-${i}`,
          skuId: 'sku-1',
          accountId: `acct-${i}`,
          accountFields: {},
          amount: 100n,
          currency: 'USD',
        }),
      );
    }
  };
  const run = (seconds: number) => Promise.all(Array.from({ length: concurrency }, () => loop(Date.now() + seconds * 1000)));
  await run(2); // warm-up
  await db.query('select pg_stat_clear_snapshot()');
  const before = await reading();
  const from = next;
  const started = process.hrtime.bigint();
  await run(durationS);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // The statistics collector publishes a backend's counts when it goes idle: wait for them.
  await new Promise((r) => setTimeout(r, 1500));
  await db.query('select pg_stat_clear_snapshot()');
  const after = await reading();
  const { rows } = await db.query<{ bytes: string }>('select pg_wal_lsn_diff($1, $2)::text as bytes', [after.lsn, before.lsn]);
  await db.end();
  await app.close();
  return { mode, orders: next - from, seconds, commits: Number(after.commits) - Number(before.commits), walBytes: Number(rows[0].bytes) };
}

function inChild(mode: Mode, databaseEnv: Record<string, string>, settings: string[]): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', __filename, ...settings], {
      env: { ...process.env, ...databaseEnv, APPENDS_MODE: mode },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code === 0 && line) resolve(JSON.parse(line) as Measured);
      else reject(new Error(`${mode}: exit ${code}\n${out}`));
    });
  });
}

async function main(): Promise<void> {
  const durationS = option('duration', 'DURATION_S', 10);
  const concurrency = option('concurrency', 'CONCURRENCY', 32);
  const merchants = option('merchants', 'MERCHANTS', 20);
  if (process.env.APPENDS_MODE) {
    const measured = await measure(process.env.APPENDS_MODE as Mode, durationS, concurrency, merchants);
    process.stdout.write(`${JSON.stringify(measured)}\n`);
    process.exit(0);
  }
  const passes = option('passes', 'PASSES', 2);
  const results: Measured[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    // Alternate which mode goes first, so that neither always meets a warmer machine.
    const modes: Mode[] = pass % 2 === 1 ? ['atomic', 'step by step'] : ['step by step', 'atomic'];
    for (const mode of modes) {
      const db = await freshDatabase('topup_bench_appends');
      try {
        log(`pass ${pass}: ${mode}, ${durationS} s`);
        results.push(await inChild(mode, db.env, process.argv.slice(2)));
      } finally {
        await db.drop();
      }
    }
  }
  console.log(
    [
      '',
      `Orders submitted in-process (SubmitOrder, no HTTP), ${concurrency} at a time over ${merchants} merchants, ${durationS} s a pass:`,
      '',
      ...table(
        ['mode', 'orders/s', 'commits per order', 'WAL bytes per order'],
        results.map((r) => [r.mode, (r.orders / r.seconds).toFixed(0), (r.commits / r.orders).toFixed(2), (r.walBytes / r.orders).toFixed(0)]),
      ),
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
