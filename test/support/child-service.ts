import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { TEST_ENV } from './service';
import { SERVICE_NODE_FLAGS, TYPESCRIPT_LOADER } from './service-node-flags';
import { TestDatabase } from './test-database';

/** `npm start`'s command line, with the repository root as the working directory. */
const SERVICE_ARGV = [...SERVICE_NODE_FLAGS, ...TYPESCRIPT_LOADER, 'src/main.ts'];

export interface ChildService {
  url: string;
  process: ChildProcess;
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/**
 * A child started on a port free a moment ago. Another process (a suite
 * running beside this one) may take the port before the child listens:
 * the child then exits with EADDRINUSE, and starts again on another.
 */
async function onAFreePort(start: (port: number) => Promise<ChildService>): Promise<ChildService> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt < 3 && error instanceof Error && error.message.includes('EADDRINUSE')) continue;
      throw error;
    }
  }
}

/** The environment that runs a child service's clock `ms` ahead of the machine's (clock-ahead.js), as another machine's might. */
export function clockAhead(ms: number): Record<string, string> {
  return { NODE_OPTIONS: `--require ${resolve(__dirname, 'clock-ahead.js')}`, CLOCK_AHEAD_MS: String(ms) };
}

/** The real service as its own process (`node src/main.ts`), for tests that kill it. */
export async function spawnService(db: Pick<TestDatabase, 'env'>, env: Record<string, string> = {}): Promise<ChildService> {
  return onAFreePort((port) => startChild({ ...process.env, ...TEST_ENV, ...db.env, ...env, PORT: String(port) }, port));
}

/**
 * The real service as its own process with exactly this environment (plus
 * what node needs to run; nothing from the test runner: no NODE_ENV=test, no
 * DATABASE_URL), as `npm start` on a fresh machine would run it.
 */
export async function spawnServiceWithOnly(env: Record<string, string>, timeoutMs = 120_000): Promise<ChildService> {
  return onAFreePort((port) => startChild({ ...runtimeEnv(), ...env, PORT: String(port) }, port, timeoutMs));
}

async function startChild(env: NodeJS.ProcessEnv, port: number, timeoutMs = 30_000): Promise<ChildService> {
  const child = spawn(process.execPath, SERVICE_ARGV, {
    cwd: resolve(__dirname, '../..'),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  // Under Jest the test environment holds what is written, and shows it only for a failing test.
  const keep = (chunk: Buffer) => {
    output += chunk;
    if (process.env.JEST_WORKER_ID) process.stdout.write(chunk);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  for (const deadline = Date.now() + timeoutMs; ;) {
    if (child.exitCode !== null) throw new Error(`service exited while starting:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    process: child,
    output: () => output,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** What node needs to run, from the test runner's environment. */
function runtimeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SystemRoot']) {
    if (process.env[name] !== undefined) env[name] = process.env[name]!;
  }
  return env;
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts the real service with exactly this environment (plus what node needs
 * to run, nothing from the test runner: no NODE_ENV=test, no DATABASE_URL) and
 * waits for it to exit, for tests of start-up refusals. A service that starts
 * instead is killed after `timeoutMs` and the promise rejects.
 */
export function runServiceUntilExit(env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<ServiceExit> {
  const childEnv = runtimeEnv();
  for (const [name, value] of Object.entries(env)) if (value !== undefined) childEnv[name] = value;

  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, SERVICE_ARGV, {
      cwd: resolve(__dirname, '../..'),
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not exit within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}
