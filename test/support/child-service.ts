import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { TEST_ENV } from './service';
import { TestDatabase } from './test-database';

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

/** The real service as its own process (`node src/main.ts`), for tests that kill it. */
export async function spawnService(db: TestDatabase, env: Record<string, string> = {}): Promise<ChildService> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: resolve(__dirname, '../..'),
    env: { ...process.env, ...TEST_ENV, ...db.env, ...env, PORT: String(port), TS_NODE_TRANSPILE_ONLY: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`service exited while starting:\n${output}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 300) throw new Error(`service did not start within 30 s:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    process: child,
    output: () => output,
    async kill(signal) {
      child.kill(signal);
      await exited;
    },
  };
}
