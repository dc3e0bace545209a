/**
 * `npm run bench:audit`: builds a ledger of a million events with one wallet
 * of 100,000 movements on a fresh database (bulk-ledger.ts), then measures
 * the auditors' tools on it, each in a process of its own (measure-item.ts):
 * verifying that wallet, that merchant and the whole log, the first
 * statement page, full exports of a short and of the long wallet, and the
 * balance as of the start, the middle and the end. Prints a table with the
 * time and memory of each, and the figures the auditors' guide promises. It
 * measures; it asserts nothing, except that the built ledger verifies clean
 * (figures from a broken ledger would mean nothing).
 *
 * Settings, as --name=value (or --name value):
 *   --wallet     100000    movements (wallet events) of the long wallet
 *   --events     1000000   events in the whole log
 *   --merchants  50        other merchants sharing the log
 *   --keep                 keep the database afterwards (its name is printed)
 * The database server comes from DATABASE_URL or PG* (default 127.0.0.1:5432,
 * user postgres), as for the tests.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { migrate } from '../../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../../src/schema';
import { createTestDatabase, TestDatabase } from '../../support/test-database';
import { markdownTable } from '../markdown-table';
import { ROOT } from '../processes';
import { AUDIT_ITEMS, AuditBenchLedger, describeLedger } from './audit-items';
import { buildLedger } from './bulk-ledger';
import type { MeasuredItem } from './measure-item';

interface Settings {
  wallet: number;
  events: number;
  merchants: number;
  keep: boolean;
}

const log = (message: string) => console.error(`[bench:audit] ${message}`);

function readSettings(argv: string[]): Settings {
  const settings: Settings = { wallet: 100_000, events: 1_000_000, merchants: 50, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z]+)(?:=(.*))?$/.exec(argv[i]);
    if (match?.[1] === 'keep') {
      settings.keep = true;
      continue;
    }
    if (!match || !['wallet', 'events', 'merchants'].includes(match[1])) {
      throw new Error(`unexpected argument ${argv[i]}\nusage: npm run bench:audit [-- --wallet N] [--events N] [--merchants N] [--keep]`);
    }
    const value = Number(match[2] ?? argv[++i]);
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${match[1]} must be a positive integer`);
    settings[match[1] as 'wallet' | 'events' | 'merchants'] = value;
  }
  return settings;
}

function measure(db: TestDatabase, ledger: AuditBenchLedger, name: string): Promise<MeasuredItem> {
  const script = join(__dirname, 'measure-item.ts');
  const env = { ...process.env, ...db.env, AUDIT_BENCH_LEDGER: JSON.stringify(ledger) };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '-r', 'ts-node/register/transpile-only', script, name], { cwd: ROOT, env, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`${name}: ${error.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!) as MeasuredItem);
    });
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

function report(settings: Settings, built: { events: number; hotOrders: number; seconds: number }, results: MeasuredItem[]): string {
  const byName = new Map(results.map((r) => [r.name, r]));
  const rows = AUDIT_ITEMS.map((item) => {
    const r = byName.get(item.name)!;
    const time = r.runsMs.length > 1 ? `${ms(median(r.runsMs))} (max ${ms(Math.max(...r.runsMs))})` : ms(r.runsMs[0]);
    return [item.label, String(r.result.count), r.result.note, time, r.rssBeforeMb.toFixed(0), r.rssPeakMb.toFixed(0), r.heapBeforeMb.toFixed(0), r.heapPeakMb.toFixed(0)];
  });
  const time = (name: string) => median(byName.get(name)!.runsMs);
  const heapGrowth = (name: string) => byName.get(name)!.heapPeakMb - byName.get(name)!.heapBeforeMb;
  const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');
  const balanceWorst = Math.max(time('balance-start'), time('balance-middle'), time('balance-end'));
  return [
    `Audit benchmark: a log of ${built.events} events (built in ${built.seconds.toFixed(1)} s), one wallet of ${settings.wallet} movements ` +
      `(${built.hotOrders} orders), ${settings.merchants} other merchants; ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end.`,
    'Each item ran in a process of its own; fast items: median of 5 runs after a warm-up. Memory in MB, before the item and at its peak.',
    '',
    ...markdownTable(['item', 'events / lines', 'note', 'ms', 'RSS before', 'RSS peak', 'heap before', 'heap peak'], rows),
    '',
    `one wallet's verification: ${ms(time('verify-wallet'))} ms (target <= 2000: ${verdict(time('verify-wallet') <= 2000)}), ` +
      `${(time('verify-wallet') / time('verify-all')).toFixed(3)} of the whole log's (target <= 0.1: ${verdict(time('verify-wallet') <= 0.1 * time('verify-all'))})`,
    `first statement page: ${ms(time('first-page'))} ms (target <= 100: ${verdict(time('first-page') <= 100)})`,
    `balance as of start/middle/end: at most ${ms(balanceWorst)} ms (target <= 100: ${verdict(balanceWorst <= 100)})`,
    `full export heap growth: ${heapGrowth('export-hot').toFixed(1)} MB for ${byName.get('export-hot')!.result.count} lines, ` +
      `${heapGrowth('export-small').toFixed(1)} MB for ${byName.get('export-small')!.result.count} lines`,
  ].join('\n');
}

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const db = await createTestDatabase('topup_bench_audit');
  log(`database ${db.name}`);
  try {
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
    const started = Date.now();
    const built = await buildLedger(db.pool, { hotMovements: settings.wallet, totalEvents: settings.events, merchants: settings.merchants }, (events) => {
      if (events % 100_000 === 0) log(`built ${events} events`);
    });
    const seconds = (Date.now() - started) / 1000;
    log(`built ${built.events} events and their read models in ${seconds.toFixed(1)} s`);
    const store = new PostgresEventStore(db.pool, { connection: db.config });
    const ledger = await describeLedger(store, built.hotMerchant, 'mch_bench_001', built.hotWalletEvents);
    await store.close();

    const results: MeasuredItem[] = [];
    for (const item of AUDIT_ITEMS) {
      log(`measuring: ${item.label}`);
      const result = await measure(db, ledger, item.name);
      if (item.name.startsWith('verify') && result.result.note !== 'clean') throw new Error(`the built ledger does not verify clean: ${result.result.note}`);
      results.push(result);
    }
    console.log(report(settings, { events: built.events, hotOrders: built.hotOrders, seconds }, results));
  } finally {
    if (settings.keep) log(`kept database ${db.name}`);
    else await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
