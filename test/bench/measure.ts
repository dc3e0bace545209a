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
import { LoadResult, runLoad } from './load-generator';
import { CoresUsed, CpuSnapshot, cpuSnapshot, coresUsed, postgresSeconds, waitUntilIdle } from './processes';
import { SKU_ID } from './service';
import { Settings, SystemName } from './settings';
import { System } from './systems';

/** spread: many merchants, closed loop; hot: one merchant, closed loop; steady: many merchants, open loop below the maximum. */
export type ScenarioName = 'spread' | 'hot' | 'steady';

export interface Measurement {
  system: SystemName;
  scenario: ScenarioName;
  pass: number;
  result: LoadResult;
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
  const result = await runLoad({
    baseUrl: system.url,
    concurrency: settings.concurrency,
    merchants: scenario === 'hot' ? [system.hot] : system.many,
    skuId: SKU_ID,
    ratePerSecond: options.ratePerSecond,
    warmupMs: settings.warmupS * 1000,
    ...(settings.requests !== undefined ? { requests: settings.requests } : { durationMs: settings.durationS * 1000 }),
    cooldownMs: COOLDOWN_MS,
    onWindow: read,
    tag: tag(),
  });
  const tail = await waitUntilIdle(pid, settleMaxMs(settings));
  const idleAt = Date.now();

  if (system.child.hasExited()) throw new Error(`the ${system.child.name} ${await system.child.exited} during "${name}":\n${system.child.logTail()}`);
  log(
    `${name}: ${result.requests} requests, ${result.accepted} accepted in ${(result.elapsedMs / 1000).toFixed(1)} s; idle ${(tail.waitedMs / 1000).toFixed(1)} s after the load`,
  );
  const { start, end } = cpu;
  const perAccepted = (x: number) => (result.accepted > 0 ? x / result.accepted : Number.NaN);
  return {
    system: system.name,
    scenario,
    pass,
    result,
    ratePerS: options.ratePerSecond,
    cores: start && end ? coresUsed(start, end, result.elapsedMs / 1000) : undefined,
    cpuMs: start && end ? { server: perAccepted((end.server - start.server) * 1000), postgres: perAccepted(postgresSeconds(start, end) * 1000) } : undefined,
    idleAfterMs: tail.waitedMs,
    idleAt,
  };
}
