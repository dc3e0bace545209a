/**
 * Preloaded (node -r) into every process the benchmark starts.
 *
 * - The child exits when the benchmark goes away, even if the benchmark was
 *   killed outright and had no chance to stop it: the IPC channel to the
 *   parent closes and 'disconnect' fires.
 * - With BENCH_CPU_PROF_DIR set (npm run bench -- --cpu-prof), the IPC message
 *   { benchProfiler: 'start' } starts the V8 CPU profiler and counts the SQL
 *   statements the process sends through pg; { benchProfiler: 'stop' } stops
 *   both, writes a .cpuprofile into that folder and answers
 *   { cpuProfile: path, threadProfiles: [path, ...], statements: [[text, count], ...] }.
 *   (node --cpu-prof writes only at a clean exit and would include start-up;
 *   this profiles just the measured scenarios. Not a signal: Nest's shutdown
 *   hooks take SIGUSR2 as a request to shut down.)
 * - Node runs preloads in worker threads too (the service's projections
 *   thread). There the same profiler and count are driven over a
 *   BroadcastChannel by the main thread's copy: each thread writes a profile
 *   of its own, and its statements are added to the process's.
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BroadcastChannel, isMainThread, threadId } from 'node:worker_threads';
import pg from 'pg';

if (isMainThread && process.channel) process.on('disconnect', () => process.exit(0));

type Statements = Array<[string, number]>;
/** Between the main thread and the others: commands one way, announcements and results the other. */
type ThreadMessage = { command: 'start' | 'stop' } | { thread: number } | { thread: number; cpuProfile?: string; statements: Statements; error?: string };

/** How long a stop waits for the threads' profiles. */
const THREADS_TIMEOUT_MS = 10_000;

const profileDir = process.env.BENCH_CPU_PROF_DIR;
if (profileDir) {
  const statements = new Map<string, number>();
  let counting = false;
  // The service loads the same pg module (one node_modules), so every query of every pool passes here.
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as { query: unknown }).query = function (this: unknown, ...args: unknown[]) {
    if (counting) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = (typeof first === 'string' ? first : (first?.text ?? '(query object)')).replace(/\s+/g, ' ').trim().slice(0, 90);
      statements.set(text, (statements.get(text) ?? 0) + 1);
    }
    return query.apply(this, args);
  };

  const session = new Session();
  session.connect();
  const start = () => {
    statements.clear();
    counting = true;
    session.post('Profiler.enable', () => session.post('Profiler.start'));
  };
  /** Stops profiling and counting; resolves with the profile's path and the statements counted. */
  const stop = () =>
    new Promise<{ cpuProfile?: string; statements: Statements; error?: string }>((resolve) => {
      counting = false;
      session.post('Profiler.stop', (error, result) => {
        if (error) return resolve({ statements: [], error: String(error) });
        mkdirSync(profileDir, { recursive: true });
        const thread = isMainThread ? '' : `-thread${threadId}`;
        const path = join(profileDir, `service-${process.pid}${thread}-${Date.now()}.cpuprofile`);
        writeFileSync(path, JSON.stringify(result.profile));
        resolve({ cpuProfile: path, statements: [...statements] });
      });
    });

  const threads = new BroadcastChannel('bench-profiler');
  threads.unref();
  if (!isMainThread) {
    threads.onmessage = (event) => {
      const message = (event as { data: ThreadMessage }).data;
      if (!('command' in message)) return;
      if (message.command === 'start') start();
      else void stop().then((taken) => threads.postMessage({ thread: threadId, ...taken } satisfies ThreadMessage));
    };
    threads.postMessage({ thread: threadId } satisfies ThreadMessage);
  } else {
    // The threads that said they are there, and the results of a stop under way.
    const known = new Set<number>();
    let results: Map<number, { cpuProfile?: string; statements: Statements; error?: string }> | undefined;
    let allIn: (() => void) | undefined;
    threads.onmessage = (event) => {
      const message = (event as { data: ThreadMessage }).data;
      if (!('thread' in message)) return;
      known.add(message.thread);
      if ('statements' in message && results) {
        results.set(message.thread, message);
        if (results.size >= known.size) allIn?.();
      }
    };
    process.on('message', (message: unknown) => {
      const command = (message as { benchProfiler?: string } | null)?.benchProfiler;
      if (command === 'start') {
        threads.postMessage({ command: 'start' } satisfies ThreadMessage);
        start();
      } else if (command === 'stop') {
        results = new Map();
        const threadsDone = new Promise<void>((resolve) => {
          allIn = resolve;
          setTimeout(resolve, THREADS_TIMEOUT_MS);
          if (known.size === 0) resolve();
        });
        threads.postMessage({ command: 'stop' } satisfies ThreadMessage);
        void Promise.all([stop(), threadsDone]).then(([main]) => {
          const fromThreads = [...results!.values()];
          results = undefined;
          if (main.error) return process.send?.({ cpuProfileError: main.error });
          const merged = new Map(main.statements);
          for (const taken of fromThreads) for (const [text, count] of taken.statements) merged.set(text, (merged.get(text) ?? 0) + count);
          process.send?.({
            cpuProfile: main.cpuProfile,
            threadProfiles: fromThreads.flatMap((taken) => (taken.cpuProfile ? [taken.cpuProfile] : [])),
            statements: [...merged],
          });
        });
      }
    });
  }
}
