/**
 * The whole-life phase: what a merchant pays for is an order completed, not
 * accepted. The service (fulfilment and callbacks on) and the whole-life peer
 * (crud-server.ts with crud-fulfilment.ts: the CRUD submit, a jobs table
 * claimed with `for update skip locked`, the upstream call, the settlement
 * and the signed callback in single transactions) get the same closed-loop
 * load, against the same upstream simulator process and the same callback
 * receiver, each on a fresh database, alternating which goes first every pass.
 *
 * Per system and pass: orders completed (called back and acknowledged) per
 * second during the measured window; CPU of the server and of Postgres for its
 * database from the window's start until every order of the load was called
 * back, per order called back in that span; the drain (after the window, until
 * the last); the submits' p50 and p99; and Postgres's work per accepted order
 * (commits, rows written, WAL bytes) from just before the load until 10 s
 * after its last callback, when every backend has published its counts. At the end a money check on both: the
 * peer's own tables add up (crud-check.ts), and the service's wallets equal its
 * deposits less its succeeded orders, with frozen funds equal to its open
 * orders and its verification of the whole log clean.
 */
import { parseAmount } from '../../src/shared/money';
import { log } from './clean-up';
import { crudWholeLifeCheck } from './crud-check';
import { provisionCrud } from './crud-store';
import { callbackReceiver, upstreamDelayMs, upstreamSimulator } from './end-to-end';
import { Credentials, LoadResult, percentile, runLoad } from './load-generator';
import { CpuSnapshot, cpuSnapshot, postgresSeconds, sleep, startListening, Child } from './processes';
import { DEPOSIT, PRICE, SKU_ID, startProvisionedService } from './service';
import { MetricSamples, scrapeMetrics, slotsHeld } from './service-metrics';
import { Settings } from './settings';
import { freshDatabase, newCredentials } from './systems';
import { TestDatabase } from '../support/test-database';

export type WholeLifeSystem = 'service' | 'peer';

export const WHOLE_LIFE_LABELS: Record<WholeLifeSystem, string> = {
  service: 'service',
  peer: 'CRUD whole life (pg, jobs table)',
};

export interface WholeLifeRun {
  system: WholeLifeSystem;
  pass: number;
  result: LoadResult;
  /** Orders called back during the measured window, per second. */
  completedPerS: number;
  /** Ms after the window until every accepted order of the load was called back; undefined if not within --drain-max. */
  drainMs?: number;
  /** Server + Postgres CPU from the window's start to the drain's end, per order called back in that span. */
  cpuMsPerCompleted: number;
  /** Of it, Postgres. */
  postgresMsPerCompleted: number;
  p50Ms: number;
  p99Ms: number;
  /** Postgres per accepted order, from just before the load until its last order was called back (PostgresWork). */
  commitsPerOrder: number;
  rowsWrittenPerOrder: number;
  walBytesPerOrder: number;
  /** The service's upstream slots over the window, from its /metrics: the mean number held, of how many (undefined for the peer). */
  upstreamSlots?: { busy: number; of: number };
}

export interface WholeLifePhase {
  runs: WholeLifeRun[];
  upstreamDelayMs: number;
  /** The money checks' sentences; ok false if either failed. */
  checks: { ok: boolean; text: string }[];
}

interface Contender {
  system: WholeLifeSystem;
  child: Child;
  url: string;
  db: TestDatabase;
  merchants: Credentials[];
  moneyCheck: () => Promise<{ ok: boolean; text: string }>;
}

async function startService(settings: Settings, upstreamUrl: string, callbackUrl: string): Promise<Contender> {
  const db = await freshDatabase('topup_bench_life');
  const { service, merchants, adminToken } = await startProvisionedService('service (whole life)', db, {
    env: { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', UPSTREAM_URL: upstreamUrl },
    merchants: settings.merchants,
    callbackUrl,
  });
  const moneyCheck = () => serviceMoneyCheck(db, service.url, adminToken, BigInt(settings.merchants) * parseAmount(DEPOSIT)!);
  return { system: 'service', child: service.child, url: service.url, db, merchants, moneyCheck };
}

async function startPeer(settings: Settings, upstreamUrl: string, callbackUrl: string): Promise<Contender> {
  const db = await freshDatabase('topup_bench_life_crud');
  const merchants = newCredentials(settings.merchants);
  const deposit = parseAmount(DEPOSIT)!;
  await provisionCrud(
    db.pool,
    merchants.map((m) => ({ ...m, balance: deposit, callbackUrl })),
    SKU_ID,
    parseAmount(PRICE)!,
  );
  const env = { ...process.env, ...db.env, PORT: '0', CRUD_UPSTREAM_URL: upstreamUrl };
  const { child, url } = await startListening('whole-life peer', 'test/bench/crud-server.ts', env, 'CRUD');
  log(`whole-life peer up at ${url}, ${merchants.length} merchants`);
  return { system: 'peer', child: child, url, db, merchants, moneyCheck: () => crudWholeLifeCheck(db.pool, BigInt(merchants.length) * deposit) };
}

/**
 * The service's ledger after the load: the read models' wallets against its
 * orders, and its own replay of the log against the read models.
 */
async function serviceMoneyCheck(db: TestDatabase, url: string, adminToken: string, deposited: bigint): Promise<{ ok: boolean; text: string }> {
  const totals = async () => {
    const { rows } = await db.pool.query<{ balances: string; frozen: string; succeeded: string; open: string }>(
      `select (select coalesce(sum(balance), 0) from rm_wallets) as balances,
              (select coalesce(sum(frozen), 0) from rm_wallets) as frozen,
              (select coalesce(sum(amount), 0) from rm_orders where stage = 'succeeded') as succeeded,
              (select coalesce(sum(amount), 0) from rm_orders where stage in ('accepted', 'sent', 'unknown', 'succeeding', 'failing')) as open`,
    );
    return { balances: BigInt(rows[0].balances), frozen: BigInt(rows[0].frozen), succeeded: BigInt(rows[0].succeeded), open: BigInt(rows[0].open) };
  };
  const adds = (t: Awaited<ReturnType<typeof totals>>) => deposited - t.balances === t.succeeded && t.frozen === t.open;
  // The two read models are written by one projections thread, but not in one transaction: give the later one a moment.
  let t = await totals();
  for (let i = 0; i < 50 && !adds(t); i++) {
    await sleep(100);
    t = await totals();
  }
  const response = await fetch(`${url}/admin/v1/audit/verify`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: '{}',
    signal: AbortSignal.timeout(600_000),
  });
  const verification = (await response.json()) as { data?: { clean?: boolean; events_checked?: number; differences_total?: number } };
  const ok = adds(t) && response.status === 200 && verification.data?.clean === true;
  return {
    ok,
    text:
      `service money check ${ok ? 'passed' : 'FAILED'}: deducted ${deposited - t.balances} = succeeded orders ${t.succeeded}, ` +
      `frozen ${t.frozen} = open orders ${t.open} (minor units); its verification of the whole log (${verification.data?.events_checked ?? '?'} events) ` +
      `answered ${response.status}, ${verification.data?.clean ? 'clean' : `${verification.data?.differences_total ?? '?'} differences`}.`,
  };
}

/** Postgres 15 publishes a quiet backend's counts within 10 s: readings of pg_stat_database wait that long after the load. */
const STATS_PUBLISHED_AFTER_MS = 10_500;

interface PostgresWork {
  commits: number;
  /** Rows inserted, updated and deleted. */
  rows: number;
  /** The WAL position: the whole server's, which only this system writes to during its load. */
  walLsn: string;
}

async function postgresWork(db: TestDatabase): Promise<PostgresWork> {
  const { rows } = await db.pool.query<{ commits: string; rows: string; lsn: string }>(
    `select xact_commit as commits, tup_inserted + tup_updated + tup_deleted as rows, pg_current_wal_lsn()::text as lsn
     from pg_stat_database where datname = current_database()`,
  );
  return { commits: Number(rows[0].commits), rows: Number(rows[0].rows), walLsn: rows[0].lsn };
}

async function walBytes(db: TestDatabase, from: string, to: string): Promise<number> {
  const { rows } = await db.pool.query<{ bytes: string }>('select pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn) as bytes', [from, to]);
  return Number(rows[0].bytes);
}

async function measureOne(
  contender: Contender,
  pass: number,
  settings: Settings,
  receiver: Awaited<ReturnType<typeof callbackReceiver>>,
): Promise<WholeLifeRun> {
  const tag = `life-${contender.system}-${pass}-${Date.now().toString(36)}`;
  const pid = contender.child.process.pid!;
  const edges: Partial<Record<'start' | 'end', { ms: number; cpu?: CpuSnapshot }>> = {};
  // Read as the window opens and closes; a failed read leaves the slots out of the printout.
  const scrapes: Partial<Record<'start' | 'end', Promise<MetricSamples | undefined>>> = {};
  log(`whole life, pass ${pass}: ${WHOLE_LIFE_LABELS[contender.system]}, closed loop at concurrency ${settings.concurrency}, ${settings.wholeLifeS} s`);
  const workBefore = await postgresWork(contender.db);
  const result = await runLoad({
    baseUrl: contender.url,
    concurrency: settings.concurrency,
    merchants: contender.merchants,
    skuId: SKU_ID,
    warmupMs: settings.warmupS * 1000,
    durationMs: settings.wholeLifeS * 1000,
    tag,
    onWindow: (edge) => {
      edges[edge] = { ms: Date.now(), cpu: cpuSnapshot(pid, contender.db.name) };
      if (contender.system === 'service') scrapes[edge] = scrapeMetrics(contender.url).catch(() => undefined);
    },
  });
  const accepted = result.accepted + result.acceptedOutside;
  const started = Date.now();
  let times: number[];
  for (;;) {
    times = await receiver.times(`${tag}-`);
    if (times.length >= accepted || Date.now() - started >= settings.drainMaxS * 1000) break;
    await sleep(100);
  }
  const cpuEnd = cpuSnapshot(pid, contender.db.name);
  const { start, end } = edges;
  if (!start?.cpu || !end || !cpuEnd) throw new Error('whole life: the load window was not seen, or the CPU could not be read');
  const inWindow = times.filter((t) => t >= start.ms && t <= end.ms).length;
  const sinceStart = times.filter((t) => t >= start.ms).length;
  const postgres = postgresSeconds(start.cpu, cpuEnd);
  const cpu = cpuEnd.server - start.cpu.server + postgres;
  const lastCallback = Math.max(...times);
  await sleep(STATS_PUBLISHED_AFTER_MS);
  const workAfter = await postgresWork(contender.db);
  const [slotsAtStart, slotsAtEnd] = [await scrapes.start, await scrapes.end];
  const upstreamSlots = slotsAtStart && slotsAtEnd ? slotsHeld(slotsAtStart, slotsAtEnd, end.ms - start.ms) : undefined;
  return {
    system: contender.system,
    pass,
    result,
    completedPerS: inWindow / ((end.ms - start.ms) / 1000),
    drainMs: times.length >= accepted ? Math.max(0, lastCallback - end.ms) : undefined,
    cpuMsPerCompleted: (cpu * 1000) / sinceStart,
    postgresMsPerCompleted: (postgres * 1000) / sinceStart,
    p50Ms: percentile(result.latenciesMs, 50),
    p99Ms: percentile(result.latenciesMs, 99),
    commitsPerOrder: (workAfter.commits - workBefore.commits) / accepted,
    rowsWrittenPerOrder: (workAfter.rows - workBefore.rows) / accepted,
    walBytesPerOrder: (await walBytes(contender.db, workBefore.walLsn, workAfter.walLsn)) / accepted,
    upstreamSlots,
  };
}

export async function wholeLife(settings: Settings): Promise<WholeLifePhase> {
  const receiver = await callbackReceiver();
  const delay = upstreamDelayMs();
  const upstream = await upstreamSimulator(delay);
  const contenders: Contender[] = [];
  try {
    contenders.push(await startService(settings, upstream.url, receiver.url));
    contenders.push(await startPeer(settings, upstream.url, receiver.url));
    // The provisioning's counts published before the first reading.
    await sleep(STATS_PUBLISHED_AFTER_MS);
    const runs: WholeLifeRun[] = [];
    for (let pass = 1; pass <= settings.passes; pass++) {
      const order = pass % 2 === 1 ? contenders : [...contenders].reverse();
      for (const contender of order) runs.push(await measureOne(contender, pass, settings, receiver));
    }
    const checks = [];
    for (const contender of contenders) checks.push(await contender.moneyCheck());
    return { runs, upstreamDelayMs: delay, checks };
  } finally {
    for (const contender of contenders) await contender.child.stop();
    await receiver.stop();
    await upstream.child.stop();
  }
}
