import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parentOf } from '../../src/infrastructure/process/launcher-watch';
import { freePort, spawnServiceWithOnly } from '../support/child-service';
import { until } from '../support/until';
import { isAlive } from '../../src/infrastructure/postgres/embedded/embedded-postgres';

const ROOT = resolve(__dirname, '../..');
// The processes' parents come from /proc.
const describeOnLinux = process.platform === 'linux' ? describe : describe.skip;

/**
 * A supervisor stops `npm start` by signalling the pid it was given, npm's.
 * The service and its port must go with it, and whatever a killed service
 * left behind must not stand in the next start's way.
 */
describeOnLinux('the service stopped through npm, and what a killed one leaves', () => {
  let dataDir: string;
  let env: Record<string, string>;
  const started: ChildProcess[] = [];
  const services: number[] = [];

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'topup-npm-start-'));
    // Run as root, Postgres runs as the postgres user, who must reach the data.
    await chmod(dataDir, 0o755);
    env = {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? tmpdir(),
      EMBEDDED_POSTGRES_PROBE: `127.0.0.1:${await freePort()}`,
      DATA_DIR: dataDir,
      NO_COLOR: '1',
    };
  });

  afterAll(async () => {
    for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    for (const pid of services) tryKill(pid, 'SIGTERM');
    await until(
      async () => existsSync(join(dataDir, 'postgres', 'postmaster.pid')),
      (held) => !held,
      30_000,
      100,
    );
    await rm(dataDir, { recursive: true, force: true });
  });

  it('SIGTERM to npm stops the service within seconds: its process, its port and its PostgreSQL are gone', async () => {
    const port = await freePort();
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(npm);
    let output = '';
    npm.stdout!.on('data', (chunk) => (output += chunk));
    npm.stderr!.on('data', (chunk) => (output += chunk));
    const ready = await until(
      () => status(`http://127.0.0.1:${port}/health/ready`),
      (s) => s === 200 || npm.exitCode !== null,
      120_000,
      200,
    );
    expect({ ready, output: ready === 200 ? '' : output }).toEqual({ ready: 200, output: '' });

    const service = descendantsOf(npm.pid!).find((pid) => commandLine(pid).includes('src/main.ts'))!;
    expect(service).toBeDefined();
    services.push(service);
    const postmaster = postmasterPid();
    npm.kill('SIGTERM');

    const gone = await until(async () => !isAlive(service) && !(await listening(port)), Boolean, 10_000, 100);
    expect({ gone, output: gone ? '' : output }).toEqual({ gone: true, output: '' });
    expect(output).toContain('is gone: stopping');
    expect(
      await until(
        async () => isAlive(postmaster),
        (a) => !a,
        10_000,
        100,
      ),
    ).toBe(false);
  });

  it('a start right after the service was killed with SIGKILL finds the data directory free at once: the helper stops PostgreSQL', async () => {
    const first = await spawnServiceWithOnly(env);
    started.push(first.process);
    const postmaster = postmasterPid();
    await first.kill('SIGKILL');

    const startedAt = Date.now();
    const second = await spawnServiceWithOnly(env);
    started.push(second.process);
    expect(Date.now() - startedAt).toBeLessThan(25_000);
    expect(isAlive(postmaster)).toBe(false);
    expect(second.output()).not.toContain('still runs in');
    expect(await status(`${second.url}/health/ready`)).toBe(200);
    await second.kill('SIGTERM');
  });

  it('a start after the service and its helper were killed with SIGKILL stops the PostgreSQL they left and starts at once', async () => {
    const first = await spawnServiceWithOnly(env);
    started.push(first.process);
    const postmaster = postmasterPid();
    const helper = parentOf(postmaster)!;
    expect(commandLine(helper)).toContain('embedded-postgres.server.mjs');
    process.kill(helper, 'SIGKILL');
    await first.kill('SIGKILL');
    // Nobody is left to stop the server: it still holds the data directory.
    expect(isAlive(postmaster)).toBe(true);

    const startedAt = Date.now();
    const second = await spawnServiceWithOnly(env);
    started.push(second.process);
    // Well before the 30 s a server that is still stopping is given.
    expect(Date.now() - startedAt).toBeLessThan(25_000);
    expect(second.output()).toContain(`PostgreSQL (pid ${postmaster}) runs in ${join(dataDir, 'postgres')} with no service behind it`);
    expect(isAlive(postmaster)).toBe(false);
    expect(await status(`${second.url}/health/ready`)).toBe(200);
    await second.kill('SIGTERM');
  });

  function postmasterPid(): number {
    return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  }
});

async function status(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolvePromise(true)));
    socket.once('error', () => resolvePromise(false));
  });
}

/** Every process below pid, parents before children. */
function descendantsOf(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = parentOf(Number(entry));
    if (parent !== undefined) parents.set(Number(entry), parent);
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0;) {
    const next = [...parents].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}
