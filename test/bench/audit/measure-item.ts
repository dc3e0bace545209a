/**
 * One item of the audit benchmark in a process of its own, so that its
 * memory is its own: prints one JSON line (a MeasuredItem). Started by
 * audit-bench.ts with the database in the environment and the ledger's
 * description in AUDIT_BENCH_LEDGER; needs node --expose-gc. With a path
 * in AUDIT_BENCH_CPU_PROFILE, writes there a V8 CPU profile of the timed runs
 * (not of loading and connecting).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Pool } from 'pg';
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { connectionConfig } from '../../../src/config/database-connection';
import { createPool } from '../../../src/infrastructure/postgres/connection';
import { AUDIT_ITEMS, AuditBenchLedger, ItemResult } from './audit-items';

export interface MeasuredItem {
  name: string;
  /** Wall time of each timed run, in ms (fast items: five after a warm-up). */
  runsMs: number[];
  /** This process's CPU time (user and system) per timed run, in ms: its own share of the work, less sensitive to other load than wall time. */
  cpuMs: number;
  /** The CPU time of the Postgres backends serving this database per timed run, in ms; null when the server is not on this machine. */
  postgresCpuMs: number | null;
  result: ItemResult;
  /** Before the item, after the process had loaded, connected and collected garbage. */
  rssBeforeMb: number;
  heapBeforeMb: number;
  /** The highest seen while the item ran, sampled every 5 ms. */
  rssPeakMb: number;
  heapPeakMb: number;
}

const TIMED_RUNS = 5;
const mb = (bytes: number) => Math.round((bytes / 1e6) * 10) / 10;

async function main(): Promise<void> {
  const item = AUDIT_ITEMS.find((i) => i.name === process.argv[2]);
  if (!item) throw new Error(`unknown item ${process.argv[2]}; one of ${AUDIT_ITEMS.map((i) => i.name).join(', ')}`);
  const ledger = JSON.parse(process.env.AUDIT_BENCH_LEDGER ?? '') as AuditBenchLedger;
  const config = connectionConfig(process.env.DATABASE_URL);
  const pool = createPool(config, { max: 8 });
  const store = new PostgresEventStore(pool, { connection: config });
  const context = { pool, store, ledger };
  try {
    if (item.repeat) await item.run(context);
    else await pool.query('select 1');
    const collect = (globalThis as { gc?: () => void }).gc;
    if (!collect) throw new Error('run with node --expose-gc');
    collect();
    const before = process.memoryUsage();
    const peak = { rss: before.rss, heap: before.heapUsed };
    const sample = () => {
      const now = process.memoryUsage();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.heap = Math.max(peak.heap, now.heapUsed);
    };
    const profiler = await startProfiler(process.env.AUDIT_BENCH_CPU_PROFILE);
    const sampler = setInterval(sample, 5);
    const runsMs: number[] = [];
    let result: ItemResult | undefined;
    const cpuBefore = process.cpuUsage();
    const postgresBefore = await backendCpu(pool);
    for (let run = 0; run < (item.repeat ? TIMED_RUNS : 1); run++) {
      const started = process.hrtime.bigint();
      result = await item.run(context);
      runsMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const cpu = process.cpuUsage(cpuBefore);
    const postgres = postgresBefore && (await backendCpu(pool));
    clearInterval(sampler);
    sample();
    await profiler?.stop();
    const measured: MeasuredItem = {
      name: item.name,
      runsMs,
      cpuMs: (cpu.user + cpu.system) / 1000 / runsMs.length,
      postgresCpuMs: postgres ? [...postgres].reduce((sum, [pid, ms]) => sum + ms - (postgresBefore!.get(pid) ?? 0), 0) / runsMs.length : null,
      result: result!,
      rssBeforeMb: mb(before.rss),
      heapBeforeMb: mb(before.heapUsed),
      rssPeakMb: mb(peak.rss),
      heapPeakMb: mb(peak.heap),
    };
    process.stdout.write(`${JSON.stringify(measured)}\n`);
  } finally {
    await store.close();
    await pool.end();
  }
}

/**
 * CPU time (ms) so far of each Postgres backend serving this database, from
 * /proc: the database's share of an item's work, which this process's own
 * CPU time does not show. Undefined when the server runs elsewhere.
 */
async function backendCpu(pool: Pool): Promise<Map<number, number> | undefined> {
  const { rows } = await pool.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database()');
  const msPerTick = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  const byPid = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') return undefined;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "pid (comm) ": state is field 3, utime and stime fields 14 and 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byPid.set(pid, (Number(fields[11]) + Number(fields[12])) * msPerTick);
    } catch {
      return undefined;
    }
  }
  return byPid;
}

/** Profiles this process until stop(), which writes the profile to `path`. */
async function startProfiler(path: string | undefined): Promise<{ stop(): Promise<void> } | undefined> {
  if (!path) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(path, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
