import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const EXIT_TIMEOUT_MS = 60_000;

// A database that does not matter: configuration is refused before any connection.
const BASE_ENV = {
  DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/topup_config_startup_never_used',
  SECRETS_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
  ADMIN_TOKEN: 'startup-test-admin-token-0123',
};

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Starts the real service as `node -r ts-node/register/transpile-only src/main.ts` with exactly this environment. */
function runService(env: Record<string, string | undefined>): Promise<Exit> {
  const childEnv: Record<string, string> = {};
  // Only what node needs to run; nothing from the test runner's environment (NODE_ENV=test, DATABASE_URL, ...).
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SystemRoot']) {
    if (process.env[name] !== undefined) childEnv[name] = process.env[name]!;
  }
  for (const [name, value] of Object.entries(env)) if (value !== undefined) childEnv[name] = value;

  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: ROOT,
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not exit within ${EXIT_TIMEOUT_MS} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, EXIT_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

describe('start-up with invalid configuration', () => {
  it.each<[string, Record<string, string | undefined>, string]>([
    ['PORT=abc', { ...BASE_ENV, PORT: 'abc' }, 'PORT'],
    ['EVENT_STORE=esdb without EVENTSTORE_CONNECTION_STRING', { ...BASE_ENV, EVENT_STORE: 'esdb' }, 'EVENTSTORE_CONNECTION_STRING'],
    ['NODE_ENV=production without ADMIN_TOKEN', { ...BASE_ENV, NODE_ENV: 'production', ADMIN_TOKEN: undefined }, 'ADMIN_TOKEN'],
  ])(
    '%s: exits non-zero naming the variable',
    async (_label, env, variable) => {
      const exit = await runService(env);
      expect(exit.signal).toBeNull();
      expect(exit.code).not.toBe(0);
      expect(exit.code).toBe(78); // EX_CONFIG
      expect(exit.stderr).toContain('Invalid configuration');
      expect(exit.stderr).toContain(variable);
      // It stopped at the configuration: it never started listening.
      expect(exit.stdout).not.toContain('listening on');
    },
    EXIT_TIMEOUT_MS + 10_000,
  );
});
