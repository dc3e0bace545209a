/**
 * One measured scenario against one system: load without a break through a
 * warm-up, the measured window and a short cool-down, then a pause until the
 * server is idle again (the service working off its projections), so that
 * the next scenario starts clean. CPU is read at the window's edges, both
 * under the same steady load: the work that trails the replies (projections)
 * is in the window as much as it trails out of it, as long as the server
 * keeps up; "idle after" shows how far it fell behind. Commits are counted
 * around the whole load (commit-count.ts).
 */
import { log } from './clean-up';
import { LoadOptions, LoadResult, runLoad } from './load-generator';
import { CoresUsed, CpuSnapshot, cpuSnapshot, coresUsed, postgresSeconds, waitUntilIdle } from './processes';
import { SKU_ID } from './service';
import { Settings, SystemName } from './settings';
import { System } from './systems';

/**
 * spread: many merchants, closed loop; hot: one merchant, closed loop;
 * steady: many merchants, open loop below the maximum; beside-hot: the
 * steady rate again, half of it over the many merchants and half on the
 * hot one at the same time (does a hot wallet slow the others?).
 */
export type ScenarioName = 'spread' | 'hot' | 'steady' | 'beside-hot';

export interface Measurement {
  system: SystemName;
  scenario: ScenarioName;
  pass: number;
  /** The load measured: in beside-hot, the many merchants' half. */
  result: LoadResult;
  /** beside-hot: the hot merchant's half, sent at the same time. */
  alongside?: LoadResult;
  /** Open loop: the requests per second sent. */
  ratePerS?: number;
  /** Cores used on average during the measured load, by whom (Linux only). */
  cores?: CoresUsed;
  /** CPU ms per accepted submit in the window (Linux only). */
  cpuMs?: { server: number; postgres: number };
  /** Transactions committed in the system's database per accepted submit (set by CommitCounts). */
  commits?: number;
  /** From the end of the load until the server was idle (includes the 1 s that shows it idle). */
  idleAfterMs: number;
  /** When it was. */
  idleAt: number;
}

/** Longest pause for a server to go idle: with fulfilment on, the service works off every order it accepted. */
const settleMaxMs = (settings: Settings) => (settings.withFulfilment ? 300_000 : 60_000);

let runCounter = 0;
const tag = () => `b${process.pid}-${Date.now().toString(36)}-${++runCounter}`;
/** Load after the window: the readings at its end are taken under load, as those at its start. */
const COOLDOWN_MS = 500;

export interface ScenarioOptions {
  /** Open loop at this many requests per second; closed loop without. */
  ratePerSecond?: number;
  /** Called as the measured window opens and closes (the CPU profiler). */
  onWindow?: (edge: 'start' | 'end') => Promise<void>;
}

export async function measure(system: System, scenario: ScenarioName, pass: number, settings: Settings, options: ScenarioOptions = {}): Promise<Measurement> {
  const name = `pass ${pass}, ${system.label}, ${scenario}`;
  const pid = system.child.process.pid!;
  const database = system.db?.name;
  const rateNote = options.ratePerSecond === undefined ? '' : ` at ${options.ratePerSecond.toFixed(0)}/s`;
  log(
    `${name}: ${settings.warmupS} s warm-up, then ${settings.requests !== undefined ? `${settings.requests} requests` : `${settings.durationS} s`} measured${rateNote}`,
  );

  const cpu: Partial<Record<'start' | 'end', CpuSnapshot>> = {};
  const read = async (edge: 'start' | 'end') => {
    cpu[edge] = cpuSnapshot(pid, database);
    await options.onWindow?.(edge);
  };
  const besideHot = scenario === 'beside-hot';
  const rate = besideHot && options.ratePerSecond !== undefined ? options.ratePerSecond / 2 : options.ratePerSecond;
  const load = (merchants: LoadOptions['merchants'], onWindow?: LoadOptions['onWindow']) =>
    runLoad({
      baseUrl: system.url,
      concurrency: settings.concurrency,
      merchants,
      skuId: SKU_ID,
      ratePerSecond: rate,
      warmupMs: settings.warmupS * 1000,
      ...(settings.requests !== undefined ? { requests: settings.requests } : { durationMs: settings.durationS * 1000 }),
      cooldownMs: COOLDOWN_MS,
      onWindow,
      tag: tag(),
    });
  const [result, alongside] = await Promise.all([
    load(scenario === 'hot' ? [system.hot] : system.many, read),
    besideHot ? load([system.hot]) : Promise.resolve(undefined),
  ]);
  const tail = await waitUntilIdle(pid, settleMaxMs(settings));
  const idleAt = Date.now();

  if (system.child.hasExited()) throw new Error(`the ${system.child.name} ${await system.child.exited} during "${name}":\n${system.child.logTail()}`);
  const hotNote = alongside ? ` (and on the hot merchant ${alongside.requests} requests, ${alongside.accepted} accepted)` : '';
  log(
    `${name}: ${result.requests} requests, ${result.accepted} accepted in ${(result.elapsedMs / 1000).toFixed(1)} s${hotNote}; idle ${(tail.waitedMs / 1000).toFixed(1)} s after the load`,
  );
  const { start, end } = cpu;
  const accepted = result.accepted + (alongside?.accepted ?? 0);
  const perAccepted = (x: number) => (accepted > 0 ? x / accepted : Number.NaN);
  return {
    system: system.name,
    scenario,
    pass,
    result,
    alongside,
    ratePerS: options.ratePerSecond,
    cores: start && end ? coresUsed(start, end, result.elapsedMs / 1000) : undefined,
    cpuMs: start && end ? { server: perAccepted((end.server - start.server) * 1000), postgres: perAccepted(postgresSeconds(start, end) * 1000) } : undefined,
    idleAfterMs: tail.waitedMs,
    idleAt,
  };
}

/** Every submit a load had accepted, the window's and those around it, both halves of beside-hot included. */
export function acceptedOverall(m: Measurement): number {
  const { result, alongside } = m;
  return result.accepted + result.acceptedOutside + (alongside ? alongside.accepted + alongside.acceptedOutside : 0);
}
