/**
 * The end-to-end phase: the service with its defaults (fulfilment on, the
 * simulator's delay, callbacks), merchants whose callback_url is a receiver in
 * a process of its own that acknowledges every callback, and a steady open-loop load.
 * When each order was accepted (its 202), became final (completed_at, the
 * time of its final event) and was called back (the receiver's first
 * acknowledgement) is recorded; four times a second the orders the read
 * model shows final (rm_orders, what a merchant's query sees) are counted.
 * After the load: the time until every accepted order is final and called
 * back. Unless the rate is given by hand, a closed loop then measures what
 * the same service accepts while it completes orders, and a second load runs
 * at the steady fraction of that.
 */
import { log, onCleanUp } from './clean-up';
import { LoadResult, runLoad } from './load-generator';
import { Child, CoresUsed, coresUsed, CpuSnapshot, cpuSnapshot, freePort, postgresSeconds, sleep, startListening, startNodeChild } from './processes';
import { profiler, ProfileTaken } from './profiler';
import { SKU_ID, startProvisionedService } from './service';
import { MetricSamples, scrapeMetrics, serverSide, ServerSideFigures } from './service-metrics';
import { Settings } from './settings';
import { freshDatabase } from './systems';
import { TestDatabase } from '../support/test-database';

const SAMPLE_MS = 250;

/** Ms since the measured load started. */
export interface Timeline {
  accepted: number[];
  final: number[];
  calledBack: number[];
  /** [ms, orders final in the read model] four times a second. */
  readModel: Array<[number, number]>;
}

export interface EndToEnd {
  ratePerS: number;
  /** Where the rate came from, for the printout: "0.7 of the service's median spread rate above". */
  basis: string;
  /** What the targets' rows of this load are called. */
  label: string;
  /** The upstream simulator's delivery delay: the least time from an order's acceptance to its final event. */
  upstreamDelayMs: number;
  result: LoadResult;
  /** Ms during which requests were sent. */
  sendMs: number;
  /** Ms until the last reply: "the load". */
  loadMs: number;
  warmupS: number;
  timeline: Timeline;
  /** With --cpu-prof: the service's profile from the start of the load to the end of the drain. */
  profile?: ProfileTaken;
  /** Ms after the load until every accepted order was final and called back; undefined if that did not happen within --drain-max. */
  drainMs?: number;
  /** Ms after the load that the wait for the drain lasted. */
  waitedMs: number;
  /** From the service's /metrics, read as the load started and as it ended; undefined if a read failed. */
  serverSide?: ServerSideFigures;
  coresDuringLoad?: CoresUsed;
  coresDuringDrain?: CoresUsed;
  /** Service + Postgres CPU from the start of the load to the end of the drain, per accepted order. */
  cpuMsPerOrder?: number;
  /** The upstream's and the receiver's CPU over the same span, per accepted order. */
  peersMsPerOrder?: number;
  /** How long the warm-up's orders took to finish before the measured load. */
  warmupDrainMs?: number;
}

/**
 * The phase's loads: one at the rate asked for (by default the steady
 * fraction of the submit-only spread), and, unless a rate was given by hand,
 * one at the steady fraction of what the same service accepts in a closed
 * loop while it completes orders (fulfilment and callbacks on).
 */
export interface EndToEndPhase {
  loads: EndToEnd[];
  /** The closed loop's, unless the rate was given by hand: its accepted submits a second, and whether completion kept up. */
  completing?: ClosedLoopWhileCompleting;
}

/**
 * The closed loop on the service with fulfilment and callbacks on. Its
 * accepted rate is a maximum the service sustains only if orders became
 * final about as fast during its window; if not, a backlog grew that the
 * drain after it shows.
 */
export interface ClosedLoopWhileCompleting {
  acceptedPerS: number;
  /** Orders of the closed loop (its warm-up's included) that became final during its window, per second. */
  finalPerS: number;
  /** Ms after the window until every order of the closed loop was final and called back; undefined if not within --drain-max. */
  drainMs?: number;
  cores?: CoresUsed;
}

/**
 * The merchants' callback endpoint (callback-receiver.ts) in a process of its
 * own; its CPU is counted with the load generator's, as the upstream's is.
 */
export async function callbackReceiver() {
  const { child, url } = await startListening('callback receiver', 'test/bench/callback-receiver.ts', { ...process.env, PORT: '0' }, 'RECEIVER');
  const seen = async (prefix?: string) => {
    const response = await fetch(`${url}/seen${prefix === undefined ? '' : `?prefix=${encodeURIComponent(prefix)}`}`);
    if (!response.ok) throw new Error(`callback receiver: GET /seen answered ${response.status}`);
    return (await response.json()) as { count: number; times?: number[] };
  };
  return {
    child,
    url: `${url}/callback`,
    /** Orders called back at least once. */
    count: async () => (await seen()).count,
    /** When the orders whose out_trade_no starts with `prefix` were first called back. */
    times: async (prefix: string) => (await seen(prefix)).times ?? [],
    stop: () => child.stop(),
  };
}

/**
 * The upstream: the simulator (src/fulfilment/simulator/main.ts, its orders in
 * memory) in a process of its own, as a real provider would be on a machine of
 * its own: its CPU is counted with the load generator's, not the service's, and
 * its records are not in the service's database.
 */
export async function upstreamSimulator(delayMs: number): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = startNodeChild('upstream simulator', 'src/fulfilment/simulator/main.ts', {
    ...process.env,
    PORT: String(port),
    UPSTREAM_SIM_DELAY_MS: String(delayMs),
    UPSTREAM_SIM_DATABASE_URL: '',
  });
  onCleanUp('stop the upstream simulator', () => child.stop());
  await child.waitForLine(/listening on port/, 30_000).catch(async (error: unknown) => {
    await child.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nupstream simulator output:\n${child.logTail()}`, { cause: error });
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The simulator's delivery delay: UPSTREAM_SIM_DELAY_MS, or the simulator's own default of 200 ms. */
export function upstreamDelayMs(): number {
  return Number(process.env.UPSTREAM_SIM_DELAY_MS ?? '200');
}

/** When (ms since the epoch) each order of a load tagged `tag` became final: its final event's time. */
async function finalTimes(db: TestDatabase, tag: string): Promise<number[]> {
  const { rows } = await db.pool.query<{ ms: string }>(
    `select (extract(epoch from completed_at) * 1000)::bigint as ms from rm_orders
     where stage in ('succeeded', 'failed') and completed_at is not null and out_trade_no like $1`,
    [`${tag}-%`],
  );
  return rows.map((r) => Number(r.ms));
}

/** When a load's measured window opened and closed, and the CPU at each edge. */
type WindowEdges = Partial<Record<'start' | 'end', { ms: number; cpu?: CpuSnapshot }>>;

/** Orders final during the closed loop's window, and the cores used in it. */
async function closedLoopFigures(
  db: TestDatabase,
  tag: string,
  closed: LoadResult,
  edges: WindowEdges,
  drainMs: number | undefined,
): Promise<ClosedLoopWhileCompleting> {
  const { start, end } = edges;
  const seconds = closed.elapsedMs / 1000;
  const finalInWindow = start && end ? (await finalTimes(db, tag)).filter((ms) => ms >= start.ms && ms <= end.ms).length : Number.NaN;
  return {
    acceptedPerS: closed.accepted / seconds,
    finalPerS: finalInWindow / seconds,
    drainMs,
    cores: start?.cpu && end?.cpu ? coresUsed(start.cpu, end.cpu, seconds) : undefined,
  };
}

export async function endToEnd(settings: Settings, asked: { ratePerS: number; basis: string; label: string }): Promise<EndToEndPhase> {
  const receiver = await callbackReceiver();
  const upstreamDelay = upstreamDelayMs();
  const upstream = await upstreamSimulator(upstreamDelay);
  const db = await freshDatabase('topup_bench_e2e');
  const { service, merchants } = await startProvisionedService('service (end to end)', db, {
    env: {
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      UPSTREAM_URL: upstream.url,
      ...(settings.cpuProfDir ? { BENCH_CPU_PROF_DIR: settings.cpuProfDir } : {}),
    },
    merchants: settings.merchants,
    callbackUrl: receiver.url,
  });
  try {
    const pid = service.child.process.pid!;
    const peers = [upstream.child.process.pid!, receiver.child.process.pid!];
    const acceptedAt: number[] = [];
    const finalInReadModel = async () =>
      Number((await db.pool.query<{ n: string }>(`select count(*) as n from rm_orders where stage in ('succeeded', 'failed')`)).rows[0].n);
    const load = (ratePerS?: number) => ({
      baseUrl: service.url,
      concurrency: settings.concurrency,
      merchants,
      skuId: SKU_ID,
      ratePerSecond: ratePerS,
      onAccepted: () => acceptedAt.push(Date.now()),
    });
    /** Waits until every order accepted so far reads final and was called back; the ms it took, or undefined after maxMs. */
    const drained = async (maxMs: number, onFinal: (final: number) => void = () => undefined) => {
      const started = Date.now();
      for (;;) {
        const final = await finalInReadModel();
        onFinal(final);
        if (final >= acceptedAt.length && (await receiver.count()) >= acceptedAt.length) return Date.now() - started;
        if (Date.now() - started >= maxMs) return undefined;
        await sleep(SAMPLE_MS);
      }
    };

    /** One measured open-loop load at `ratePerS` after `warmupS` of the same, and the drain after it. */
    const measured = async (ratePerS: number, basis: string, label: string, warmupS: number, profile: boolean): Promise<EndToEnd> => {
      let warmupDrainMs: number | undefined;
      if (warmupS > 0) {
        log(`end to end: warm-up ${warmupS} s at ${ratePerS.toFixed(0)}/s`);
        await runLoad({ ...load(ratePerS), durationMs: warmupS * 1000, tag: `e2e-warm-${Date.now().toString(36)}` });
        warmupDrainMs = await drained(settings.drainMaxS * 1000);
      }

      const before = { accepted: acceptedAt.length, final: await finalInReadModel() };
      const started = Date.now();
      const readModel: Array<[number, number]> = [];
      const sample = (final: number) => readModel.push([Date.now() - started, final - before.final]);
      let loading = true;
      const sampler = (async () => {
        while (loading) {
          sample(await finalInReadModel());
          await sleep(SAMPLE_MS);
        }
      })();

      log(`end to end: ${settings.endToEndS} s at ${ratePerS.toFixed(0)}/s, callbacks to ${receiver.url}`);
      /** A failed read leaves the figures out of the report; it does not end the run. */
      const metrics = () =>
        scrapeMetrics(service.url).catch((error: unknown) => {
          log(`end to end: could not read /metrics: ${String(error)}`);
          return undefined;
        });
      const metricsStart: MetricSamples | undefined = await metrics();
      const cpuStart = cpuSnapshot(pid, db.name, peers);
      if (profile) await profiler(service.child, 'start');
      const tag = `e2e-${Date.now().toString(36)}`;
      const result = await runLoad({ ...load(ratePerS), durationMs: settings.endToEndS * 1000, tag });
      const loadMs = Date.now() - started;
      const metricsEnd = await metrics();
      loading = false;
      await sampler;
      const cpuLoadEnd = cpuSnapshot(pid, db.name, peers);
      log(`end to end: ${acceptedAt.length - before.accepted} accepted; waiting until all are final and called back`);
      const drainWait = await drained(settings.drainMaxS * 1000, sample);
      const waitedMs = Date.now() - started - loadMs;
      const cpuEnd = cpuSnapshot(pid, db.name, peers);
      const taken = profile ? await profiler(service.child, 'stop') : undefined;

      const since = (times: number[]) =>
        times
          .map((t) => t - started)
          .filter((ms) => ms >= 0)
          .sort((a, b) => a - b);
      const timeline: Timeline = {
        accepted: since(acceptedAt.slice(before.accepted)),
        final: since(await finalTimes(db, tag)),
        calledBack: since(await receiver.times(`${tag}-`)),
        readModel,
      };
      const lastDone = Math.max(timeline.final[timeline.final.length - 1] ?? 0, timeline.calledBack[timeline.calledBack.length - 1] ?? 0);
      const accepted = timeline.accepted.length;
      return {
        ratePerS,
        basis,
        label,
        upstreamDelayMs: upstreamDelay,
        result,
        sendMs: result.elapsedMs,
        loadMs,
        warmupS,
        timeline,
        serverSide: metricsStart && metricsEnd ? serverSide(metricsStart, metricsEnd) : undefined,
        drainMs: drainWait === undefined ? undefined : Math.max(0, lastDone - loadMs),
        waitedMs,
        coresDuringLoad: cpuStart && cpuLoadEnd ? coresUsed(cpuStart, cpuLoadEnd, loadMs / 1000) : undefined,
        coresDuringDrain: cpuLoadEnd && cpuEnd && waitedMs > 0 ? coresUsed(cpuLoadEnd, cpuEnd, waitedMs / 1000) : undefined,
        cpuMsPerOrder:
          cpuStart && cpuEnd && accepted > 0 ? ((cpuEnd.server - cpuStart.server + postgresSeconds(cpuStart, cpuEnd)) * 1000) / accepted : undefined,
        peersMsPerOrder: cpuStart && cpuEnd && accepted > 0 ? ((cpuEnd.peers - cpuStart.peers) * 1000) / accepted : undefined,
        warmupDrainMs,
        profile: taken,
      };
    };

    const loads = [await measured(asked.ratePerS, asked.basis, asked.label, settings.endToEndWarmupS, settings.cpuProfDir !== undefined)];
    if (settings.endToEndRate !== undefined) return { loads };

    // The same service's maximum while it completes orders: a closed loop as
    // in "spread", then its backlog worked off before the load at a fraction of it.
    log(`end to end: closed loop at concurrency ${settings.concurrency}, ${settings.warmupS} s warm-up, then ${settings.durationS} s measured`);
    const tag = `e2e-max-${Date.now().toString(36)}`;
    const edges: WindowEdges = {};
    const closed = await runLoad({
      ...load(),
      warmupMs: settings.warmupS * 1000,
      durationMs: settings.durationS * 1000,
      tag,
      onWindow: (edge) => {
        edges[edge] = { ms: Date.now(), cpu: cpuSnapshot(pid, db.name, peers) };
      },
    });
    const drainMs = await drained(settings.drainMaxS * 1000);
    if (drainMs === undefined) log(`end to end: the closed loop's orders were not all final within ${settings.drainMaxS} s`);
    const completing = await closedLoopFigures(db, tag, closed, edges, drainMs);
    const ratePerS = settings.steadyFraction * completing.acceptedPerS;
    loads.push(
      await measured(
        ratePerS,
        `${settings.steadyFraction} of the ${completing.acceptedPerS.toFixed(0)} submits a second this service accepted in a closed loop at concurrency ${settings.concurrency} ` +
          'while completing orders, measured just before',
        `end to end at ${settings.steadyFraction} of the maximum while completing orders`,
        settings.endToEndWarmupS,
        false,
      ),
    );
    return { loads, completing };
  } finally {
    await service.child.stop();
    await receiver.stop();
    await upstream.child.stop();
  }
}
