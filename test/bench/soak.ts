/**
 * `npm run bench:soak`: the service under sustained load, a minute at a time,
 * to show what a short benchmark hides: whether intake, its tail, the
 * completion of orders and the process's memory stay flat while the log
 * grows. The service runs with its defaults on a fresh database (the built-in
 * upstream simulator inside its process, as `npm start` runs it, unless
 * UPSTREAM_URL is set), every final order called back to a callback receiver
 * in a process of its own (the end-to-end phase's, acknowledging every
 * callback) unless --callbacks=0; closed loops of --concurrency clients, a
 * quarter of them on one hot merchant and the rest over --merchants others.
 *
 * Each minute: submits accepted a second, p50 and p99, refusals by code (the
 * backlog policy's 503 SERVICE_BUSY among them), orders that became final in
 * the read models a second (rm_order_minutes' counts: a row a minute), orders
 * called back a second, the backlog (accepted, not final), the service's
 * resident memory and the
 * log's length, and per accepted order
 * what Postgres did for it: blocks its database read from outside shared
 * buffers, WAL bytes and full-page images (the server's, pg_stat_wal: only
 * this load writes). As the log and the tables grow past shared buffers,
 * those are what a growing cost per order would come from; after the load,
 * the tables and indexes those reads came from. Then the time until every
 * order is final in the read model and called back, then the service's verification of the whole
 * log (POST /admin/v1/audit/verify) with its time and the service's peak
 * resident memory meanwhile. It measures; it asserts nothing, except that the
 * verification is clean (exit code 1 if not).
 *
 * Settings, as --name=value: --minutes (SOAK_MINUTES, 30), --concurrency
 * (CONCURRENCY, 32), --merchants (MERCHANTS, 20), --delay (UPSTREAM_SIM_DELAY_MS,
 * 50: the simulator's delivery delay), --callbacks (CALLBACKS, 1; 0 runs the
 * service without sending callbacks, as this benchmark did before 2026-12-07,
 * their deliveries left pending), --heap (HEAP_MB, 0: Node's own limit;
 * otherwise the service's --max-old-space-size, to show that its memory is
 * bounded by that setting and not by the log's length: a service that needed
 * more would fail). The database server as for the tests.
 */
import { readFileSync } from 'node:fs';
import { log, runBench, wasInterrupted } from './clean-up';
import { LoadResult, percentile, runLoad } from './load-generator';
import { callbackReceiver } from './end-to-end';
import { cpuSnapshot, postgresSeconds, sleep } from './processes';
import { SKU_ID, startProvisionedService } from './service';
import { numberOption } from './settings';
import { firstAndLast, firstAndLastTen, Minute } from './soak-report';
import { freshDatabase } from './systems';
import { table } from './tables';

const WINDOW_MS = 60_000;
const DRAIN_MAX_MS = 30 * 60_000;

const option = (name: string, variable: string, fallback: number, zero = false) => numberOption(process.argv, process.env, name, variable, fallback, { zero });

/** Resident memory of a process, MB (Linux /proc). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : Number.NaN;
}

/** Postgres's counters a minute's cost per order is read from: its database's block reads and hits, and the server's WAL. */
interface PostgresCounters {
  blocksRead: number;
  blocksHit: number;
  walBytes: number;
  fullPageImages: number;
}

async function postgresCounters(db: Awaited<ReturnType<typeof freshDatabase>>): Promise<PostgresCounters> {
  const { rows } = await db.pool.query<{ blks_read: string; blks_hit: string; wal_bytes: string; wal_fpi: string }>(
    `select d.blks_read, d.blks_hit, w.wal_bytes, w.wal_fpi
       from pg_stat_database d, pg_stat_wal w where d.datname = current_database()`,
  );
  const row = rows[0];
  return { blocksRead: Number(row.blks_read), blocksHit: Number(row.blks_hit), walBytes: Number(row.wal_bytes), fullPageImages: Number(row.wal_fpi) };
}

async function main(): Promise<void> {
  const minutes = option('minutes', 'SOAK_MINUTES', 30);
  const concurrency = option('concurrency', 'CONCURRENCY', 32);
  const merchantCount = option('merchants', 'MERCHANTS', 20);
  const delayMs = option('delay', 'UPSTREAM_SIM_DELAY_MS', 50);
  const heapMb = option('heap', 'HEAP_MB', 0, true);
  const callbacks = option('callbacks', 'CALLBACKS', 1, true) > 0;
  const db = await freshDatabase('topup_bench_soak');
  const receiver = callbacks ? await callbackReceiver() : undefined;
  const { service, merchants, adminToken } = await startProvisionedService('service (soak)', db, {
    env: {
      UPSTREAM_SIM_DELAY_MS: String(delayMs),
      ...(receiver ? { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true' } : { CALLBACK_CONCURRENCY: '0' }),
      ...(heapMb > 0 ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${heapMb}`.trim() } : {}),
    },
    merchants: merchantCount + 1,
    callbackUrl: receiver?.url,
  });
  const calledBack = async () => (receiver ? await receiver.count() : Number.NaN);
  const pid = service.child.process.pid!;
  const hot = merchants[merchantCount];
  const many = merchants.slice(0, merchantCount);
  const hotClients = Math.max(1, Math.round(concurrency / 4));

  // Read every minute, so cheap: the per-minute counts of orders ending (a row a minute) and the log's sequence, not a scan of rm_orders.
  const counts = async () => {
    const { rows } = await db.pool.query<{ final: string; events: string }>(
      `select (select coalesce(sum(succeeded + failed), 0) from rm_order_minutes) as final,
              (select last_value from es_events_global_position_seq) as events`,
    );
    return { final: Number(rows[0].final), events: Number(rows[0].events) };
  };
  const finalInReadModel = async () =>
    Number((await db.pool.query<{ n: string }>(`select count(*) as n from rm_orders where stage in ('succeeded', 'failed')`)).rows[0].n);

  const server = await serverSettings(db);
  const table_: Minute[] = [];
  let accepted = 0;
  let before = await counts();
  let calledBackBefore = await calledBack();
  const readsBefore = await readsByRelation(db);
  log(
    `soak: ${minutes} min, ${concurrency} clients (${hotClients} on the hot wallet), ${merchantCount} merchants, simulator delay ${delayMs} ms, callbacks ${callbacks ? 'on' : 'off'}, ` +
      `the service's heap ${heapMb > 0 ? `limited to ${heapMb} MB` : "at Node's own limit"}; the database server: ${server}`,
  );
  for (let minute = 1; minute <= minutes && !wasInterrupted(); minute++) {
    const load = (clients: number, who: typeof merchants, tag: string) =>
      runLoad({ baseUrl: service.url, concurrency: clients, merchants: who, skuId: SKU_ID, durationMs: WINDOW_MS, tag });
    const tag = `soak-${minute}-${Date.now().toString(36)}`;
    const cpuBefore = cpuSnapshot(pid, db.name);
    const pgBefore = await postgresCounters(db);
    const results: LoadResult[] = await Promise.all([load(concurrency - hotClients, many, `${tag}-m`), load(hotClients, [hot], `${tag}-h`)]);
    const cpuAfter = cpuSnapshot(pid, db.name);
    const pgAfter = await postgresCounters(db);
    const after = await counts();
    const calledBackAfter = await calledBack();
    const got = results.reduce((n, r) => n + r.accepted + r.acceptedOutside, 0);
    accepted += got;
    const latencies = Float64Array.from(results.flatMap((r) => [...r.latenciesMs])).sort();
    const refused = new Map<string, number>();
    for (const r of results) for (const [code, n] of r.failures) refused.set(code, (refused.get(code) ?? 0) + n);
    const row: Minute = {
      minute,
      acceptedPerS: got / (WINDOW_MS / 1000),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      refused,
      finalPerS: (after.final - before.final) / (WINDOW_MS / 1000),
      calledBackPerS: (calledBackAfter - calledBackBefore) / (WINDOW_MS / 1000),
      backlog: accepted - after.final,
      rssMb: rssMb(pid),
      events: after.events,
      serviceCpuMs: cpuBefore && cpuAfter ? ((cpuAfter.server - cpuBefore.server) * 1000) / got : Number.NaN,
      postgresCpuMs: cpuBefore && cpuAfter ? (postgresSeconds(cpuBefore, cpuAfter) * 1000) / got : Number.NaN,
      blocksRead: (pgAfter.blocksRead - pgBefore.blocksRead) / got,
      missed: (pgAfter.blocksRead - pgBefore.blocksRead) / Math.max(1, pgAfter.blocksRead - pgBefore.blocksRead + pgAfter.blocksHit - pgBefore.blocksHit),
      walBytes: (pgAfter.walBytes - pgBefore.walBytes) / got,
      fullPageImages: (pgAfter.fullPageImages - pgBefore.fullPageImages) / got,
    };
    table_.push(row);
    log(
      `minute ${minute}: ${row.acceptedPerS.toFixed(0)} accepted/s, p99 ${row.p99.toFixed(0)} ms, ${row.finalPerS.toFixed(0)} final/s, ${row.calledBackPerS.toFixed(0)} called back/s, ` +
        `CPU ${row.serviceCpuMs.toFixed(2)} + ${row.postgresCpuMs.toFixed(2)} ms an order, ${row.blocksRead.toFixed(2)} blocks read, ` +
        `${row.walBytes.toFixed(0)} WAL bytes and ${row.fullPageImages.toFixed(2)} full-page images an order, backlog ${row.backlog}, RSS ${row.rssMb.toFixed(0)} MB, ${row.events} events${refused.size ? `, refused ${[...refused].map(([c, n]) => `${c} x${n}`).join(' ')}` : ''}`,
    );
    before = after;
    calledBackBefore = calledBackAfter;
  }

  const reads = relationReads(readsBefore, await readsByRelation(db));

  const drainStarted = Date.now();
  let finalOrders = await finalInReadModel();
  while (finalOrders < accepted && Date.now() - drainStarted < DRAIN_MAX_MS) {
    await sleep(1000);
    finalOrders = await finalInReadModel();
  }
  const drainMs = Date.now() - drainStarted;
  let calledBackOrders = await calledBack();
  while (calledBackOrders < accepted && Date.now() - drainStarted < DRAIN_MAX_MS) {
    await sleep(1000);
    calledBackOrders = await calledBack();
  }
  const calledBackDrainMs = Date.now() - drainStarted;
  const final = { final: finalOrders, events: (await counts()).events };

  log('verifying the whole log through the service');
  let peakRss = rssMb(pid);
  const rssBefore = peakRss;
  let verifying = true;
  const sampler = (async () => {
    while (verifying) {
      peakRss = Math.max(peakRss, rssMb(pid));
      await sleep(200);
    }
  })();
  const verifyStarted = Date.now();
  const response = await fetch(`${service.url}/admin/v1/audit/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(3_600_000),
  });
  const verification = (await response.json()) as { data?: { clean?: boolean; events_checked?: number; differences_total?: number } };
  const verifyMs = Date.now() - verifyStarted;
  verifying = false;
  await sampler;
  const size = (await db.pool.query<{ size: string }>('select pg_size_pretty(pg_database_size(current_database())) as size')).rows[0].size;
  await service.child.stop();
  await receiver?.stop();

  const fmt = (n: number, digits = 0) => n.toFixed(digits);
  console.log(
    [
      '',
      ...table(
        [
          'minute',
          'accepted/s',
          'p50 ms',
          'p99 ms',
          'refused',
          'final/s',
          'called back/s',
          'CPU ms/order: service',
          'Postgres',
          'blocks read/order',
          'missed shared buffers',
          'WAL B/order',
          'full-page images/order',
          'backlog',
          'RSS MB',
          'events',
        ],
        table_.map((m) => [
          String(m.minute),
          fmt(m.acceptedPerS),
          fmt(m.p50, 1),
          fmt(m.p99, 1),
          [...m.refused].map(([c, n]) => `${c} ${n}`).join(', ') || '0',
          fmt(m.finalPerS),
          callbacks ? fmt(m.calledBackPerS) : 'off',
          fmt(m.serviceCpuMs, 2),
          fmt(m.postgresCpuMs, 2),
          fmt(m.blocksRead, 2),
          `${fmt(m.missed * 100, 2)} %`,
          fmt(m.walBytes),
          fmt(m.fullPageImages, 2),
          String(m.backlog),
          fmt(m.rssMb),
          String(m.events),
        ]),
      ),
      '',
      `Blocks read from outside shared buffers during the load, by table (its indexes and TOAST included; ${accepted} orders accepted):`,
      '',
      ...table(
        ['table', 'blocks read', 'an order', 'of them index', 'size at the end'],
        reads.map((r) => [r.table, String(r.blocks), fmt(r.blocks / Math.max(1, accepted), 2), String(r.indexBlocks), r.size]),
      ),
      '',
      `The service's heap ${heapMb > 0 ? `limited to ${heapMb} MB (--max-old-space-size)` : "at Node's own limit"}. The database server: ${server}.`,
      firstAndLast(table_),
      firstAndLastTen(table_),
      `After the load: every order final ${(drainMs / 1000).toFixed(1)} s later (${final.final} of ${accepted})` +
        (callbacks ? `, called back ${(calledBackDrainMs / 1000).toFixed(1)} s later (${calledBackOrders} of ${accepted})` : ', callbacks off') +
        `; the log ${final.events} events, the database ${size}.`,
      `Verification of the whole log through the service: ${response.status}, ${verification.data?.clean ? 'clean' : `NOT clean (${verification.data?.differences_total} differences)`}, ` +
        `${verification.data?.events_checked} events in ${(verifyMs / 1000).toFixed(1)} s; the service's RSS ${fmt(rssBefore)} MB before, ${fmt(peakRss)} MB at its peak.`,
    ].join('\n'),
  );
  if (!verification.data?.clean) process.exitCode = 1;
}

interface RelationCounters {
  heap: number;
  index: number;
  toast: number;
  size: string;
}

/** Blocks each table of the database (its indexes and TOAST with it) has read from outside shared buffers since the server started. */
async function readsByRelation(db: Awaited<ReturnType<typeof freshDatabase>>): Promise<Map<string, RelationCounters>> {
  const { rows } = await db.pool.query<{ relname: string; heap: string; idx: string; toast: string; size: string }>(
    `select relname, coalesce(heap_blks_read, 0) as heap, coalesce(idx_blks_read, 0) as idx,
            coalesce(toast_blks_read, 0) + coalesce(tidx_blks_read, 0) as toast, pg_size_pretty(pg_total_relation_size(relid)) as size
     from pg_statio_user_tables`,
  );
  return new Map(rows.map((r) => [r.relname, { heap: Number(r.heap), index: Number(r.idx), toast: Number(r.toast), size: r.size }]));
}

/** The tables that read most between two readings, most first (the ten largest, and only those that read at all). */
function relationReads(before: Map<string, RelationCounters>, after: Map<string, RelationCounters>) {
  return [...after]
    .map(([name, a]) => {
      const b = before.get(name) ?? { heap: 0, index: 0, toast: 0 };
      const indexBlocks = a.index - b.index;
      return { table: name, blocks: a.heap - b.heap + indexBlocks + a.toast - b.toast, indexBlocks, size: a.size };
    })
    .filter((r) => r.blocks > 0)
    .sort((x, y) => y.blocks - x.blocks)
    .slice(0, 10);
}

/** The server settings a soak's figures depend on most, as `name value` pairs: memory, checkpoints, WAL, autovacuum. */
async function serverSettings(db: Awaited<ReturnType<typeof freshDatabase>>): Promise<string> {
  const { rows } = await db.pool.query<{ name: string; setting: string }>(
    `select name, current_setting(name) as setting from pg_settings
      where name in ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'autovacuum', 'synchronous_commit')
      order by name`,
  );
  return rows.map((r) => `${r.name} ${r.setting}`).join(', ');
}

runBench(main);
