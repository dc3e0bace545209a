import { ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join, resolve } from 'node:path';
import { onCleanUp } from './clean-up';

export const ROOT = resolve(__dirname, '..', '..');
const PRELOAD = join(__dirname, 'child-preload.ts');
/** TypeScript without ts-node's repl and domain module, as a build runs (register-typescript.js). */
const REGISTER = join(__dirname, '../../scripts/register-typescript.js');
const LOG_LINES_KEPT = 60;

export interface Child {
  readonly name: string;
  readonly process: ChildProcess;
  /** Settles when the process has exited, with how. */
  readonly exited: Promise<string>;
  hasExited(): boolean;
  /** The last lines it printed, stdout and stderr interleaved. */
  logTail(): string;
  /** Resolves on the first stdout line matching the pattern; rejects if the process exits first or after timeoutMs. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
  /** SIGTERM, then SIGKILL after graceMs. Safe to call more than once. */
  stop(graceMs?: number): Promise<void>;
}

/** Every child still running, for the last-resort kill when the benchmark exits. */
const running = new Set<Child>();

process.on('exit', () => {
  for (const child of running) child.process.kill('SIGKILL');
});

/** `node -r register-typescript.js -r child-preload.ts <script>` in the repository root. */
export function startNodeChild(name: string, script: string, env: NodeJS.ProcessEnv, nodeArgs: readonly string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeArgs, '-r', REGISTER, '-r', PRELOAD, script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const lines: string[] = [];
  const lineListeners = new Set<(line: string) => void>();
  let done = false;
  const exited = new Promise<string>((resolve) => {
    proc.on('exit', (code, signal) => {
      done = true;
      running.delete(child);
      resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
    });
    proc.on('error', (error) => {
      done = true;
      running.delete(child);
      resolve(`could not start: ${error.message}`);
    });
  });
  const collect = (stream: NodeJS.ReadableStream | null, isStdout: boolean) => {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (text: string) => {
      const parts = (partial + text).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        if (lines.length > LOG_LINES_KEPT) lines.shift();
        if (isStdout) for (const listener of lineListeners) listener(line);
      }
    });
  };
  collect(proc.stdout, true);
  collect(proc.stderr, false);

  const child: Child = {
    name,
    process: proc,
    exited,
    hasExited: () => done,
    logTail: () => lines.map((line) => `  | ${line}`).join('\n'),
    waitForLine(pattern, timeoutMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`${name}: no line matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
        const listener = (line: string) => {
          const match = line.match(pattern);
          if (match) finish(undefined, match);
        };
        const finish = (error?: Error, match?: RegExpMatchArray) => {
          clearTimeout(timer);
          lineListeners.delete(listener);
          if (error) reject(error);
          else resolve(match!);
        };
        lineListeners.add(listener);
        void exited.then((how) => finish(new Error(`${name} ${how} before printing ${pattern}`)));
      });
    },
    async stop(graceMs = 10_000) {
      if (done) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  running.add(child);
  return child;
}

/** Starts a child that prints "<TAG>_LISTENING <port>" once it listens. */
export async function startListening(name: string, script: string, env: NodeJS.ProcessEnv, tag: string): Promise<{ child: Child; url: string }> {
  const child = startNodeChild(name, script, env);
  onCleanUp(`stop the ${name}`, () => child.stop());
  try {
    const [, port] = await child.waitForLine(new RegExp(`^${tag}_LISTENING (\\d+)$`), 60_000);
    return { child, url: `http://127.0.0.1:${port}` };
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${name} output:\n${child.logTail()}`, { cause: error });
  }
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls GET url until it answers 200; fails early when the child exits. */
export async function waitForHttp200(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.hasExited()) throw new Error(`${child.name} ${await child.exited} before ${url} answered`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on Linux

/** CPU time (user + system) a process has used so far, in seconds, from /proc; undefined where there is no /proc. */
export function cpuSeconds(pid: number): number | undefined {
  const stat = procStat(pid);
  return stat && stat.cpuSeconds;
}

function procStat(pid: number | string): { command: string; cpuSeconds: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the line)
    return { command: stat.slice(stat.indexOf('(') + 1, close), cpuSeconds: ticks / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds a process's threads have used so far, summed by the name the
 * kernel gives each thread (Node names them: MainThread, WorkerThread for a
 * worker_threads Worker, V8Worker for V8's helpers that collect garbage
 * beside the main thread, libuv-worker for the thread pool); empty where
 * there is no /proc.
 */
export function threadSecondsByName(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tids) {
    const stat = procStat(`${pid}/task/${tid}`);
    if (stat) byName.set(stat.command, (byName.get(stat.command) ?? 0) + stat.cpuSeconds);
  }
  return byName;
}

/** CPU seconds used so far, by whom. */
export interface CpuSnapshot {
  /** The server under test (the service or the baseline). */
  server: number;
  /**
   * The local Postgres server's processes that work for the benchmark's
   * database, by pid: its backends and the server's own background processes
   * (backends of other databases count as other load).
   */
  postgres: ReadonlyMap<number, number>;
  /** This process: the load generator. */
  bench: number;
  /**
   * The peers it was given: the end-to-end phase's stand-ins for the upstream
   * and the merchants' callback endpoint, which in production run on machines
   * of their own.
   */
  peers: number;
  /** Busy time of the whole machine, all cores. */
  machine: number;
  /** The server's main thread, where it takes requests; undefined without schedstat. */
  mainThread?: ThreadTime;
}

/** Cores used on average between two snapshots, by whom (the same parts as CpuSnapshot). */
export interface CoresUsed {
  server: number;
  postgres: number;
  bench: number;
  peers: number;
  machine: number;
  /** The server's main thread: the share of the time it ran, and the share it was ready to run but waited for a CPU. */
  mainThread?: ThreadTime;
}

/**
 * How long a thread ran on a CPU, and how long it was ready to run but waited
 * for one (the scheduler's run queue): seconds in a snapshot, shares of the
 * window in CoresUsed.
 */
export interface ThreadTime {
  running: number;
  waiting: number;
}

/** From /proc/<pid>/task/<tid>/schedstat (nanoseconds); undefined where the kernel does not keep it. */
function threadTime(pid: number, tid: number): ThreadTime | undefined {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return Number.isFinite(running) && Number.isFinite(waiting) ? { running: running / 1e9, waiting: waiting / 1e9 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far, by whom; undefined where there is no /proc (not
 * Linux). Without a database, "postgres" is only the server's own background
 * processes.
 */
export function cpuSnapshot(serverPid: number, database: string | undefined, peerPids: readonly number[] = []): CpuSnapshot | undefined {
  const server = cpuSeconds(serverPid);
  if (server === undefined) return undefined;
  const peers = peerPids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
  const postgres = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const stat = procStat(entry);
    if (stat?.command !== 'postgres') continue;
    let title: string;
    try {
      title = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // gone meanwhile
    }
    // A backend's title names its client, "127.0.0.1(54321)" or "[local]", after the database.
    const backend = /\S\(\d+\)|\[local\]/.test(title);
    if (!backend || (database !== undefined && title.includes(` ${database} `))) postgres.set(Number(entry), stat.cpuSeconds);
  }
  const usage = process.cpuUsage();
  // cpu  user nice system idle iowait irq softirq steal ...
  const total = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const busyTicks = total.slice(0, 8).reduce((a, b) => a + b, 0) - total[3] - total[4];
  return {
    server,
    postgres,
    bench: (usage.user + usage.system) / 1e6,
    peers,
    machine: busyTicks / TICKS_PER_SECOND,
    mainThread: threadTime(serverPid, serverPid),
  };
}

/**
 * Postgres CPU seconds between two snapshots, process by process: a backend
 * that started in between counts from zero, and one that exited in between
 * counts nothing (what it did since the first snapshot is lost, but its whole
 * life's CPU is not taken off the total, as a difference of the two sums
 * would: the pool closes idle connections during a drain).
 */
export function postgresSeconds(before: CpuSnapshot, after: CpuSnapshot): number {
  let seconds = 0;
  for (const [pid, cpu] of after.postgres) seconds += cpu - (before.postgres.get(pid) ?? 0);
  return seconds;
}

/** Cores used on average between two snapshots, by whom. */
export function coresUsed(before: CpuSnapshot, after: CpuSnapshot, seconds: number): CoresUsed {
  const per = (key: 'server' | 'bench' | 'peers' | 'machine') => (after[key] - before[key]) / seconds;
  const [a, b] = [before.mainThread, after.mainThread];
  return {
    server: per('server'),
    postgres: postgresSeconds(before, after) / seconds,
    bench: per('bench'),
    peers: per('peers'),
    machine: per('machine'),
    mainThread: a && b ? { running: (b.running - a.running) / seconds, waiting: (b.waiting - a.waiting) / seconds } : undefined,
  };
}

/** Cores used by everything else on the machine meanwhile. */
export function otherCores(c: CoresUsed): number {
  return Math.max(0, c.machine - c.server - c.postgres - c.bench - c.peers);
}

/**
 * Waits until a process has stopped working off what the last run left behind
 * (fulfilment, projections): under 5 % of a core over two half-second windows
 * in a row, at most maxMs. Without /proc it just waits a fixed 3 s.
 */
export async function waitUntilIdle(pid: number, maxMs = 60_000): Promise<{ idle: boolean; waitedMs: number }> {
  const started = Date.now();
  if (cpuSeconds(pid) === undefined) {
    await sleep(3000);
    return { idle: true, waitedMs: Date.now() - started };
  }
  let quiet = 0;
  let last = cpuSeconds(pid)!;
  while (quiet < 2 && Date.now() - started < maxMs) {
    await sleep(500);
    const now = cpuSeconds(pid);
    if (now === undefined) break;
    quiet = now - last < 0.025 ? quiet + 1 : 0;
    last = now;
  }
  return { idle: quiet >= 2, waitedMs: Date.now() - started };
}
