/**
 * `npm run bench:audit`: builds a ledger of a million events with one wallet
 * of 100,000 movements on a fresh database (bulk-ledger.ts), then measures
 * the auditors' tools on it, each in a process of its own (measure-item.ts):
 * verifying that wallet, that merchant and the whole log, the first
 * statement page, full exports of a short and of the long wallet (also with
 * the heap capped, to show what an export keeps), and the
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
 *   --reuse      NAME      measure on a database an earlier --keep run left,
 *                          without building anything (and keep it again)
 *   --items      a,b,...   measure only these items (by name: verify-wallet,
 *                          verify-all, first-page ...); the default is all
 *   --rounds     1         measure the items this many times, round after
 *                          round: each figure is then the median of the
 *                          rounds, with their range, and the ratio of one
 *                          wallet's verification to the whole log's is taken
 *                          within each round (the two ran seconds apart)
 *   --cpu-prof   DIR       write a V8 CPU profile of each measured process
 *                          to DIR and print where each spent its time
 * The database server comes from DATABASE_URL or PG* (default 127.0.0.1:5432,
 * user postgres), as for the tests.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { migrate } from '../../../src/infrastructure/postgres/migrations';
import { allMigrations } from '../../../src/schema';
import { createTestDatabase, openTestDatabase, TestDatabase } from '../../support/test-database';
import { markdownTable } from '../markdown-table';
import { ROOT } from '../processes';
import { summariseProfile } from '../profile-summary';
import { AUDIT_ITEMS, AuditBenchLedger, AuditItem, describeLedger, EXPORT_HEAP_CAP_MB } from './audit-items';
import { buildLedger } from './bulk-ledger';
import type { MeasuredItem } from './measure-item';

interface Settings {
  wallet: number;
  events: number;
  merchants: number;
  keep: boolean;
  reuse?: string;
  items: readonly AuditItem[];
  rounds: number;
  cpuProf?: string;
}

/** What was built, kept in the database beside the ledger so that --reuse can report on it. */
interface Built {
  wallet: number;
  merchants: number;
  events: number;
  hotOrders: number;
  seconds: number;
  ledger: AuditBenchLedger;
}

const log = (message: string) => console.error(`[bench:audit] ${message}`);
const USAGE = 'usage: npm run bench:audit [-- --wallet N] [--events N] [--merchants N] [--keep] [--reuse DATABASE] [--items a,b] [--rounds N] [--cpu-prof DIR]';

function readSettings(argv: string[]): Settings {
  const settings: Settings = { wallet: 100_000, events: 1_000_000, merchants: 50, keep: false, items: AUDIT_ITEMS, rounds: 1 };
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (match?.[1] === 'keep') {
      settings.keep = true;
      continue;
    }
    if (!match) throw new Error(`unexpected argument ${argv[i]}\n${USAGE}`);
    const [, name] = match;
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value\n${USAGE}`);
    if (name === 'reuse') settings.reuse = value;
    else if (name === 'cpu-prof') settings.cpuProf = resolve(value);
    else if (name === 'items') settings.items = value.split(',').map(itemNamed);
    else if (['wallet', 'events', 'merchants', 'rounds'].includes(name)) {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1) throw new Error(`--${name} must be a positive integer`);
      settings[name as 'wallet' | 'events' | 'merchants' | 'rounds'] = number;
    } else throw new Error(`unexpected argument ${argv[i]}\n${USAGE}`);
  }
  return settings;
}

function itemNamed(name: string): AuditItem {
  const item = AUDIT_ITEMS.find((i) => i.name === name);
  if (!item) throw new Error(`unknown item ${name}; one of ${AUDIT_ITEMS.map((i) => i.name).join(', ')}`);
  return item;
}

function measure(db: TestDatabase, ledger: AuditBenchLedger, item: AuditItem, cpuProfile?: string): Promise<MeasuredItem> {
  const script = join(__dirname, 'measure-item.ts');
  const env = { ...process.env, ...db.env, AUDIT_BENCH_LEDGER: JSON.stringify(ledger), AUDIT_BENCH_CPU_PROFILE: cpuProfile ?? '' };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', ...(item.heapCapMb ? [`--max-old-space-size=${item.heapCapMb}`] : []), '-r', 'ts-node/register/transpile-only', script, item.name],
      { cwd: ROOT, env, maxBuffer: 1 << 20 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`${item.name}: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as MeasuredItem);
      },
    );
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
/** A figure of several runs: the median, and the range when there is one. */
const spread = (values: number[], format: (v: number) => string) =>
  values.length > 1 ? `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})` : format(values[0]);

/** An item's time in one round: a fast item's median of its runs, a slow item's one run. */
const roundTime = (measured: MeasuredItem) => median(measured.runsMs);

function report(settings: Settings, built: Built, results: Map<string, MeasuredItem[]>): string {
  const rows = settings.items.map((item) => {
    const rounds = results.get(item.name)!;
    // Memory of the round that went highest: the worst seen, with where it started from.
    const worst = rounds.reduce((a, b) => (b.rssPeakMb > a.rssPeakMb ? b : a));
    const times = rounds.length > 1 ? rounds.map(roundTime) : rounds[0].runsMs;
    const time = rounds.length > 1 || times.length === 1 ? spread(times, ms) : `${ms(median(times))} (max ${ms(Math.max(...times))})`;
    const cpu = spread(
      rounds.map((r) => r.cpuMs),
      ms,
    );
    const postgres = rounds.every((r) => r.postgresCpuMs !== null)
      ? spread(
          rounds.map((r) => r.postgresCpuMs!),
          ms,
        )
      : '-';
    return [
      item.label,
      String(rounds[0].result.count),
      rounds[0].result.note,
      time,
      cpu,
      postgres,
      worst.rssBeforeMb.toFixed(0),
      worst.rssPeakMb.toFixed(0),
      worst.heapBeforeMb.toFixed(0),
      worst.heapPeakMb.toFixed(0),
    ];
  });
  const has = (name: string) => results.has(name);
  const time = (name: string) => median(results.get(name)!.map(roundTime));
  const heapGrowth = (name: string) => Math.max(...results.get(name)!.map((r) => r.heapPeakMb - r.heapBeforeMb));
  const verdict = (ok: boolean) => (ok ? 'yes' : 'NO');
  const roundsNote =
    settings.rounds > 1
      ? `${settings.rounds} rounds; times are the median of the rounds (range in brackets); memory of the round that peaked highest`
      : 'fast items: median of 5 runs after a warm-up';
  const lines = [
    `Audit benchmark: a log of ${built.events} events (built in ${built.seconds.toFixed(1)} s), one wallet of ${built.wallet} movements ` +
      `(${built.hotOrders} orders), ${built.merchants} other merchants; ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(2)} at the end.`,
    `Each item ran in a process of its own; ${roundsNote}. CPU: the measuring process's own, and that of the Postgres backends serving it. Memory in MB, before the item and at its peak.`,
    '',
    ...markdownTable(['item', 'events / lines', 'note', 'ms', 'node CPU ms', 'Postgres CPU ms', 'RSS before', 'RSS peak', 'heap before', 'heap peak'], rows),
    '',
  ];
  if (has('verify-wallet')) {
    const wallet = time('verify-wallet');
    let line = `one wallet's verification: ${ms(wallet)} ms (target <= 2000: ${verdict(wallet <= 2000)})`;
    if (has('verify-all')) {
      // Within each round, so that both sides of a ratio ran under the same load.
      const ratios = results.get('verify-wallet')!.map((w, round) => roundTime(w) / roundTime(results.get('verify-all')![round]));
      line += `, ${spread(ratios, (r) => r.toFixed(3))} of the whole log's (target <= 0.1: ${verdict(median(ratios) <= 0.1)})`;
    }
    lines.push(line);
  }
  if (has('first-page')) lines.push(`first statement page: ${ms(time('first-page'))} ms (target <= 100: ${verdict(time('first-page') <= 100)})`);
  const balances = ['balance-start', 'balance-middle', 'balance-end'].filter(has);
  if (balances.length > 0) {
    const worst = Math.max(...balances.map(time));
    lines.push(`balance as of ${balances.map((b) => b.slice('balance-'.length)).join('/')}: at most ${ms(worst)} ms (target <= 100: ${verdict(worst <= 100)})`);
  }
  const exports = ['export-hot', 'export-small'].filter(has);
  if (exports.length > 0) {
    lines.push(`full export heap growth: ${exports.map((e) => `${heapGrowth(e).toFixed(1)} MB for ${results.get(e)![0].result.count} lines`).join(', ')}`);
  }
  if (has('export-hot-capped')) {
    // A capped heap collects its garbage as it goes: what is left is what the export keeps. One that
    // kept its lines would hold at least its own output; a quarter of it is the bound for "flat".
    const kept = ['export-small-capped', 'export-hot-capped'].filter(has);
    const hot = results.get('export-hot-capped')![0].result;
    const flat = heapGrowth('export-hot-capped') < Number.parseFloat(hot.note) / 4;
    lines.push(
      `full export, heap capped at ${EXPORT_HEAP_CAP_MB} MB: growth ${kept.map((e) => `${heapGrowth(e).toFixed(1)} MB for ${results.get(e)![0].result.count} lines`).join(', ')} ` +
        `(target: flat, under a quarter of the ${hot.note} export: ${verdict(flat)})`,
    );
  }
  return lines.join('\n');
}

/** A fresh database with the ledger the settings ask for, and its description stored beside it. */
async function build(settings: Settings): Promise<{ db: TestDatabase; built: Built }> {
  const db = await createTestDatabase('topup_bench_audit');
  log(`database ${db.name}`);
  try {
    await migrate(db.pool, allMigrations({ eventStore: 'postgres', upstreamSimulator: false }));
    const started = Date.now();
    const ledger = await buildLedger(db.pool, { hotMovements: settings.wallet, totalEvents: settings.events, merchants: settings.merchants }, (events) => {
      if (events % 100_000 === 0) log(`built ${events} events`);
    });
    const seconds = (Date.now() - started) / 1000;
    log(`built ${ledger.events} events and their read models in ${seconds.toFixed(1)} s`);
    const store = new PostgresEventStore(db.pool, { connection: db.config });
    const description = await describeLedger(store, ledger.hotMerchant, 'mch_bench_001', ledger.hotWalletEvents);
    await store.close();
    const built: Built = {
      wallet: settings.wallet,
      merchants: settings.merchants,
      events: ledger.events,
      hotOrders: ledger.hotOrders,
      seconds,
      ledger: description,
    };
    await db.pool.query('create table bench_audit_ledger (built jsonb not null)');
    await db.pool.query('insert into bench_audit_ledger (built) values ($1)', [JSON.stringify(built)]);
    return { db, built };
  } catch (error) {
    if (!settings.keep) await db.drop();
    throw error;
  }
}

/** The database and ledger an earlier run kept. */
async function reuse(name: string): Promise<{ db: TestDatabase; built: Built }> {
  const db = openTestDatabase(name);
  try {
    const { rows } = await db.pool.query<{ built: Built }>('select built from bench_audit_ledger');
    if (rows.length !== 1) throw new Error('no description of the ledger');
    log(`reusing database ${name}: ${rows[0].built.events} events, one wallet of ${rows[0].built.wallet} movements`);
    return { db, built: rows[0].built };
  } catch (error) {
    await db.pool.end();
    throw new Error(`--reuse ${name}: not a database that bench:audit --keep left (${(error as Error).message})`, { cause: error });
  }
}

async function main(): Promise<void> {
  const settings = readSettings(process.argv.slice(2));
  const { db, built } = settings.reuse ? await reuse(settings.reuse) : await build(settings);
  const keep = settings.keep || settings.reuse !== undefined;
  try {
    if (settings.cpuProf) mkdirSync(settings.cpuProf, { recursive: true });
    const results = new Map<string, MeasuredItem[]>(settings.items.map((item) => [item.name, []]));
    for (let round = 1; round <= settings.rounds; round++) {
      for (const item of settings.items) {
        log(`measuring${settings.rounds > 1 ? ` (round ${round} of ${settings.rounds})` : ''}: ${item.label}`);
        const profile = settings.cpuProf && join(settings.cpuProf, `${item.name}-${round}.cpuprofile`);
        const result = await measure(db, built.ledger, item, profile);
        if (item.name.startsWith('verify') && result.result.note !== 'clean') throw new Error(`the built ledger does not verify clean: ${result.result.note}`);
        results.get(item.name)!.push(result);
        if (profile) log(`${item.label}, ${ms(roundTime(result))} ms:\n${summariseProfile(profile, `CPU profile of ${item.name} (its timed runs only)`)}`);
      }
    }
    console.log(report(settings, built, results));
  } finally {
    if (keep) {
      await db.pool.end();
      log(`kept database ${db.name} (measure on it again with --reuse ${db.name}; drop it when done)`);
    } else await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
