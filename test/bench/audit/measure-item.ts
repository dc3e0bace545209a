/**
 * One item of the audit benchmark in a process of its own, so that its
 * memory is its own: prints one JSON line (a MeasuredItem). Started by
 * audit-bench.ts with the database in the environment and the ledger's
 * description in AUDIT_BENCH_LEDGER; needs node --expose-gc.
 */
import { PostgresEventStore } from '../../../src/infrastructure/event-store/postgres-event-store';
import { connectionConfig, createPool } from '../../../src/infrastructure/postgres/connection';
import { AUDIT_ITEMS, AuditBenchLedger, ItemResult } from './audit-items';

export interface MeasuredItem {
  name: string;
  /** Wall time of each timed run, in ms (fast items: five after a warm-up). */
  runsMs: number[];
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
  const pool = createPool(config, 8);
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
    const sampler = setInterval(sample, 5);
    const runsMs: number[] = [];
    let result: ItemResult | undefined;
    for (let run = 0; run < (item.repeat ? TIMED_RUNS : 1); run++) {
      const started = process.hrtime.bigint();
      result = await item.run(context);
      runsMs.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    clearInterval(sampler);
    sample();
    const measured: MeasuredItem = {
      name: item.name,
      runsMs,
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

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
