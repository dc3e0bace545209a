/**
 * The service's CPU profile and SQL statement count during a measured load,
 * taken through child-preload.ts (npm run bench -- --cpu-prof).
 */
import { log } from './clean-up';
import { Child, sleep } from './processes';

export interface ProfileTaken {
  path: string;
  /** The profiles of the service's other threads (its projections thread), taken over the same window. */
  threadPaths: string[];
  /** Every SQL statement the service sent while profiling, with how often. */
  statements: Array<[string, number]>;
}

/** Starts or stops the service's CPU profiler and statement count (child-preload.ts); stopping returns what was taken. */
export function profiler(child: Child, command: 'start' | 'stop'): Promise<ProfileTaken | undefined> {
  if (command === 'start') {
    child.process.send({ benchProfiler: 'start' });
    return sleep(100).then(() => undefined);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(undefined), 30_000);
    const onMessage = (message: unknown) => {
      const m = message as { cpuProfile?: string; threadProfiles?: string[]; statements?: Array<[string, number]>; cpuProfileError?: string };
      if (m.cpuProfileError) log(`CPU profile failed: ${m.cpuProfileError}`);
      if (m.cpuProfile) done({ path: m.cpuProfile, threadPaths: m.threadProfiles ?? [], statements: m.statements ?? [] });
      else if (m.cpuProfileError) done(undefined);
    };
    const done = (taken: ProfileTaken | undefined) => {
      clearTimeout(timer);
      child.process.off('message', onMessage);
      resolve(taken);
    };
    child.process.on('message', onMessage);
    child.process.send({ benchProfiler: 'stop' });
  });
}

/** `per`: what `accepted` counts (accepted submits in the submit scenarios, accepted orders end to end). */
export function statementSummary(taken: ProfileTaken, accepted: number, per = 'accepted submit', top = 12): string {
  const total = taken.statements.reduce((n, [, count]) => n + count, 0);
  const perSubmit = accepted > 0 ? (total / accepted).toFixed(1) : 'n/a';
  return [
    `  SQL statements sent while profiling: ${total}, ${perSubmit} per ${per} in the window (every thread's: projections included, and fulfilment when on); the most frequent:`,
    ...[...taken.statements]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([text, count]) => `    ${(accepted > 0 ? (count / accepted).toFixed(2) : String(count)).padStart(6)}  ${text}`),
  ].join('\n');
}

/** Profiles the child during a measured window: pass `onWindow` to the scenario, then read `taken()`. */
export function profileWindow(child: Child) {
  let taken: ProfileTaken | undefined;
  return {
    onWindow: async (edge: 'start' | 'end') => {
      if (edge === 'start') await profiler(child, 'start');
      else taken = await profiler(child, 'stop');
    },
    taken: () => taken,
  };
}
