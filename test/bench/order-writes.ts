/**
 * `npm run bench:writes`: where an order's Postgres work goes. The service
 * with fulfilment and callbacks on (the upstream simulator and a callback
 * receiver in processes of their own, as in the end-to-end phase) takes an
 * open-loop load; once every order is final and called back, and every
 * backend has published its counts, it prints per accepted order:
 *   - rows inserted, updated (of them HOT) and deleted, by table
 *     (pg_stat_user_tables);
 *   - WAL bytes and full-page images by table, its indexes included
 *     (pg_walinspect over the load's LSN range), and by kind of record;
 *   - storage: how much each table grew on disk (its indexes and TOAST
 *     included), measured after a VACUUM at each end, so that space freed
 *     by the queues' deletes counts as reusable.
 * Everything the service does in the span counts, its pollers included;
 * other databases on the server should be idle meanwhile.
 *
 * Settings: --rate (RATE, 400 orders/s), --duration (DURATION_S, 10),
 * --merchants (MERCHANTS, 50); the database server as for the tests.
 */
import { log, onCleanUp, runBench } from './clean-up';
import { callbackReceiver, upstreamDelayMs, upstreamSimulator } from './end-to-end';
import { runLoad } from './load-generator';
import { cpuSnapshot, postgresSeconds, sleep, threadSecondsByName } from './processes';
import { SKU_ID, startProvisionedService } from './service';
import { numberOption } from './settings';
import { freshDatabase } from './systems';
import { table } from './tables';
import { TestDatabase } from '../support/test-database';

const STATS_PUBLISHED_AFTER_MS = 10_500;

const option = (name: string, variable: string, fallback: number) => numberOption(process.argv, process.env, name, variable, fallback);

interface TableWrites {
  table: string;
  inserted: number;
  updated: number;
  hot: number;
  deleted: number;
}

async function tableWrites(db: TestDatabase): Promise<Map<string, TableWrites>> {
  const { rows } = await db.pool.query<{ relname: string; ins: string; upd: string; hot: string; del: string }>(
    'select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del from pg_stat_user_tables',
  );
  return new Map(
    rows.map((r) => [r.relname, { table: r.relname, inserted: Number(r.ins), updated: Number(r.upd), hot: Number(r.hot), deleted: Number(r.del) }]),
  );
}

/** Bytes on disk per table, its indexes and TOAST included, after a VACUUM (autovacuum may be off on a test server). */
async function tableBytes(db: TestDatabase): Promise<Map<string, number>> {
  await db.pool.query('vacuum');
  const { rows } = await db.pool.query<{ relname: string; bytes: string }>('select relname, pg_total_relation_size(relid) as bytes from pg_stat_user_tables');
  return new Map(rows.map((r) => [r.relname, Number(r.bytes)]));
}

const lsn = async (db: TestDatabase) => (await db.pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0].lsn;

/** WAL bytes by table (an index counts for its table) over [from, to): the first block each record touches names its relation. */
async function walByTable(db: TestDatabase, from: string, to: string) {
  const { rows } = await db.pool.query<{ relation: string; kinds: string; records: string; bytes: string; fpi: string }>(
    `with records as (
       select (regexp_match(block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid as filenode, resource_manager || '/' || record_type as kind, record_length, fpi_length
       from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
     ), named as (
       select coalesce(t.relname, c.relname, case when r.filenode is null then '(no relation: commits, xid, ...)' else '(another database or a catalog)' end) as relation,
              r.kind, r.record_length, r.fpi_length
       from records r
       left join pg_class c on c.relfilenode = r.filenode
       left join pg_index i on i.indexrelid = c.oid
       left join pg_class t on t.oid = i.indrelid
     )
     select relation, string_agg(kind || ' ' || n, ', ' order by n desc) as kinds,
            sum(n) as records, sum(bytes) as bytes, sum(fpi) as fpi
     from (select relation, kind, count(*) as n, sum(record_length) as bytes, sum(fpi_length) as fpi from named group by relation, kind) k
     group by relation order by sum(bytes) desc`,
    [from, to],
  );
  return rows.map((r) => ({ relation: r.relation, kinds: r.kinds, records: Number(r.records), bytes: Number(r.bytes), fpi: Number(r.fpi) }));
}

/** "Heap/INSERT 4000, Btree/INSERT_LEAF 8000" as counts per order: "Heap/INSERT 1.00, Btree/INSERT_LEAF 2.00". */
const recordKinds = (kinds: string, orders: number) =>
  kinds
    .split(', ')
    .map((k) => k.replace(/ (\d+)$/, (_, n: string) => ` ${(Number(n) / orders).toFixed(2)}`))
    .filter((k) => !k.endsWith(' 0.00'))
    .join(', ');

async function walByKind(db: TestDatabase, from: string, to: string) {
  const { rows } = await db.pool.query<{ kind: string; count: string; bytes: string; fpi: string }>(
    `select "resource_manager/record_type" as kind, count, combined_size as bytes, fpi_size as fpi
     from pg_get_wal_stats($1::pg_lsn, $2::pg_lsn, true) where count > 0 order by combined_size desc`,
    [from, to],
  );
  return rows.map((r) => ({ kind: r.kind, count: Number(r.count), bytes: Number(r.bytes), fpi: Number(r.fpi) }));
}

type CpuReading = { process: ReturnType<typeof cpuSnapshot>; threads: Map<string, number> };

/**
 * CPU per order from the load's start until its last order was called
 * back: the service's process by thread, and the Postgres processes for its
 * database. At a fixed rate these vary less from run to run than a closed
 * loop's, whose rate moves with whatever else the machine runs.
 */
function cpuLines(before: CpuReading, after: CpuReading, accepted: number): string[] {
  if (!before.process || !after.process) return ['CPU: not measured (no /proc)'];
  const ms = (seconds: number) => ((seconds * 1000) / accepted).toFixed(3);
  const threads = [...after.threads]
    .map(([name, seconds]) => ({ name, seconds: seconds - (before.threads.get(name) ?? 0) }))
    .filter((t) => t.seconds > 0)
    .sort((x, y) => y.seconds - x.seconds);
  const service = after.process.server - before.process.server;
  const postgres = postgresSeconds(before.process, after.process);
  return [
    `CPU ms per order: ${ms(service + postgres)}, the service ${ms(service)} and Postgres for its database ${ms(postgres)}; the service by thread:`,
    '',
    ...table(
      ['thread', 'CPU ms per order'],
      threads.map((t) => [t.name, ms(t.seconds)]),
    ),
  ];
}

async function main(): Promise<void> {
  const rate = option('rate', 'RATE', 400);
  const durationS = option('duration', 'DURATION_S', 10);
  const merchantCount = option('merchants', 'MERCHANTS', 50);
  const receiver = await callbackReceiver();
  onCleanUp('stop the callback receiver', () => receiver.stop());
  const upstream = await upstreamSimulator(upstreamDelayMs());
  const db = await freshDatabase('topup_bench_writes');
  await db.pool.query('create extension if not exists pg_walinspect');
  const { service, merchants } = await startProvisionedService('service (writes)', db, {
    env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', UPSTREAM_URL: upstream.url },
    merchants: merchantCount,
    callbackUrl: receiver.url,
  });
  const load = (tag: string, seconds: number) =>
    runLoad({ baseUrl: service.url, concurrency: 32, merchants, skuId: SKU_ID, ratePerSecond: rate, durationMs: seconds * 1000, tag });
  const calledBack = async (tag: string, accepted: number) => {
    for (let waited = 0; (await receiver.times(`${tag}-`)).length < accepted; waited += 200) {
      if (waited > 120_000) throw new Error(`${tag}: not every order was called back within 2 min`);
      await sleep(200);
    }
  };

  log(`warm-up: 5 s at ${rate}/s`);
  const warm = await load('writes-warm', 5);
  await calledBack('writes-warm', warm.accepted + warm.acceptedOutside);
  await sleep(STATS_PUBLISHED_AFTER_MS);

  const before = { tables: await tableWrites(db), bytes: await tableBytes(db), lsn: await lsn(db) };
  const cpuBefore = { process: cpuSnapshot(service.child.process.pid!, db.name), threads: threadSecondsByName(service.child.process.pid!) };
  log(`load: ${durationS} s at ${rate}/s`);
  const result = await load('writes', durationS);
  const accepted = result.accepted + result.acceptedOutside;
  await calledBack('writes', accepted);
  const cpuAfter = { process: cpuSnapshot(service.child.process.pid!, db.name), threads: threadSecondsByName(service.child.process.pid!) };
  const endLsn = await lsn(db);
  await sleep(STATS_PUBLISHED_AFTER_MS);
  const after = await tableWrites(db);
  await service.child.stop();
  const grown = [...(await tableBytes(db)).entries()]
    .map(([table, bytes]) => ({ table, bytes: bytes - (before.bytes.get(table) ?? 0) }))
    .filter((g) => g.bytes !== 0)
    .sort((x, y) => y.bytes - x.bytes);
  const grownTotal = grown.reduce((n, g) => n + g.bytes, 0);

  const per = (n: number, digits = 2) => (n / accepted).toFixed(digits);
  const writes = [...after.values()]
    .map((a) => {
      const b = before.tables.get(a.table);
      return {
        table: a.table,
        inserted: a.inserted - (b?.inserted ?? 0),
        updated: a.updated - (b?.updated ?? 0),
        hot: a.hot - (b?.hot ?? 0),
        deleted: a.deleted - (b?.deleted ?? 0),
      };
    })
    .filter((w) => w.inserted + w.updated + w.deleted > 0)
    .sort((x, y) => y.inserted + y.updated + y.deleted - (x.inserted + x.updated + x.deleted));
  const sum = (f: (w: TableWrites) => number) => writes.reduce((n, w) => n + f(w), 0);
  const wal = await walByTable(db, before.lsn, endLsn);
  const kinds = await walByKind(db, before.lsn, endLsn);
  const walTotal = wal.reduce((n, w) => n + w.bytes, 0);

  console.log(
    [
      '',
      `${accepted} orders accepted at ${rate}/s for ${durationS} s, every one final and called back; per accepted order:`,
      '',
      ...table(
        ['table', 'rows written', 'inserted', 'updated', 'of them HOT', 'deleted'],
        [
          ...writes.map((w) => [w.table, per(w.inserted + w.updated + w.deleted), per(w.inserted), per(w.updated), per(w.hot), per(w.deleted)]),
          [
            'all',
            per(sum((w) => w.inserted + w.updated + w.deleted)),
            per(sum((w) => w.inserted)),
            per(sum((w) => w.updated)),
            per(sum((w) => w.hot)),
            per(sum((w) => w.deleted)),
          ],
        ],
      ),
      '',
      ...cpuLines(cpuBefore, cpuAfter, accepted),
      '',
      `WAL: ${per(walTotal, 0)} bytes per order, by table (its indexes included):`,
      '',
      ...table(
        ['relation', 'WAL bytes', 'of it full-page images', 'records', 'of them'],
        [
          ...wal.slice(0, 20).map((w) => [w.relation, per(w.bytes, 0), per(w.fpi, 0), per(w.records), recordKinds(w.kinds, accepted)]),
          [
            'all',
            per(walTotal, 0),
            per(
              wal.reduce((n, w) => n + w.fpi, 0),
              0,
            ),
            per(wal.reduce((n, w) => n + w.records, 0)),
            '',
          ],
        ],
      ),
      '',
      'WAL by kind of record:',
      '',
      ...table(
        ['record', 'bytes', 'of it full-page images', 'records'],
        kinds.slice(0, 15).map((k) => [k.kind, per(k.bytes, 0), per(k.fpi, 0), per(k.count)]),
      ),
      '',
      `Storage: ${per(grownTotal, 0)} bytes per order on disk (${(((grownTotal / accepted) * 1e6) / 2 ** 30).toFixed(2)} GiB per million orders), by table, its indexes and TOAST included:`,
      '',
      ...table(['table', 'bytes per order'], [...grown.map((g) => [g.table, per(g.bytes, 0)]), ['all', per(grownTotal, 0)]]),
    ].join('\n'),
  );
}

runBench(main);
