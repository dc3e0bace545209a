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
 *   { cpuProfile: path, statements: [[text, count], ...] }. (node --cpu-prof
 *   writes only at a clean exit and would include start-up; this profiles just
 *   the measured scenarios. Not a signal: Nest's shutdown hooks take SIGUSR2 as
 *   a request to shut down.)
 */
import { Session } from 'node:inspector';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

if (process.channel) process.on('disconnect', () => process.exit(0));

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
  process.on('message', (message: unknown) => {
    const command = (message as { benchProfiler?: string } | null)?.benchProfiler;
    if (command === 'start') {
      statements.clear();
      counting = true;
      session.post('Profiler.enable', () => session.post('Profiler.start'));
    } else if (command === 'stop') {
      counting = false;
      session.post('Profiler.stop', (error, result) => {
        if (error) {
          process.send?.({ cpuProfileError: String(error) });
          return;
        }
        mkdirSync(profileDir, { recursive: true });
        const path = join(profileDir, `service-${process.pid}-${Date.now()}.cpuprofile`);
        writeFileSync(path, JSON.stringify(result.profile));
        process.send?.({ cpuProfile: path, statements: [...statements] });
      });
    }
  });
}
