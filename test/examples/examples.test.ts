import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { provisionDemo } from '../../scripts/demo';
import { newNonce, sign } from '../../src/merchant-client';
import { ChildService, freePort, spawnService } from '../support/child-service';
import { TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { detectToolchains } = require('./toolchains') as { detectToolchains(): { language: string; version?: string; missing?: string }[] };

// The commands run from the repository's root, as examples/README.md gives them.
const ROOT = resolve(__dirname, '../..');

interface Example {
  language: string;
  /** The merchant program: signs, submits, polls, receives and verifies the callback. */
  command: string[];
  /** A callback receiver of its own (PHP's built-in web server), when the program does not listen itself. */
  receiver?: (port: number) => string[];
  /** A variable the program cannot do without. */
  required: string;
}

const EXAMPLES_BY_LANGUAGE: Example[] = [
  { language: 'Python', command: ['python3', 'examples/python/topup_example.py'], required: 'TOPUP_CALLBACK_URL' },
  {
    language: 'PHP',
    command: ['php', 'examples/php/example.php'],
    receiver: (port) => ['php', '-S', `127.0.0.1:${port}`, 'examples/php/callback.php'],
    required: 'TOPUP_API_KEY',
  },
  { language: 'Java', command: ['java', 'examples/java/TopupExample.java'], required: 'TOPUP_CALLBACK_URL' },
];

/** What a program that says what is wrong does not show instead. */
const RAW_FAILURE = /Traceback|KeyError|Exception in thread|NullPointerException|Fatal error|PHP Warning|Uncaught/;

const toolchains = new Map(detectToolchains().map((t) => [t.language, t]));

/**
 * Each example in examples/ runs against the real service, as a merchant in
 * that language would: a signed submit, polling until the order is final, and
 * a callback received and verified. A missing toolchain skips its example and
 * says why (global-setup.js says so at the top of the run too).
 */
describe('merchant examples in other languages, against the service', () => {
  let db: TestDatabase;
  let service: ChildService;

  beforeAll(async () => {
    db = await createTestDatabase('topup_examples');
    service = await spawnService(db, {
      CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
      FULFILMENT_CONCURRENCY: '8',
      CALLBACK_CONCURRENCY: '8',
      UPSTREAM_SIM_DELAY_MS: '50',
      NO_COLOR: '1',
    });
  });

  /** A demo merchant whose callbacks go to callbackUrl, as the examples read it from their environment. */
  async function demoMerchantEnv(callbackUrl: string): Promise<NodeJS.ProcessEnv> {
    const merchant = await provisionDemo(service.url, TEST_ENV.ADMIN_TOKEN, callbackUrl);
    return {
      ...process.env,
      TOPUP_BASE_URL: service.url,
      TOPUP_API_KEY: merchant.apiKey,
      TOPUP_APP_SECRET: merchant.appSecret,
      TOPUP_CALLBACK_URL: callbackUrl,
    };
  }

  afterAll(async () => {
    await service?.kill('SIGTERM');
    await db?.drop();
  });

  for (const example of EXAMPLES_BY_LANGUAGE) {
    const toolchain = toolchains.get(example.language)!;
    if (toolchain.missing) {
      it.skip(`${example.language}: SKIPPED, ${toolchain.missing}`, () => undefined);
      continue;
    }
    it(`${example.language} (${toolchain.version}): signs, submits, polls to success, and verifies the callback`, async () => {
      const port = await freePort();
      const env = await demoMerchantEnv(`http://127.0.0.1:${port}/topup/callback`);
      const receiver = example.receiver ? await startReceiver(example.receiver(port), env, port) : undefined;
      try {
        const running = start(example.command, env);
        // While it waits for its callback, a forged one (signed with another secret) is refused.
        const forged = await forgedCallback(env.TOPUP_CALLBACK_URL!, env.TOPUP_API_KEY!);
        const run = await running.done;
        expect(forged).toBe(401);
        const output = receiver ? await receiver.waitFor(/^callback: verified \S+ success$/m) : run.output;
        expect(output).toMatch(/^callback refused: INVALID_SIGNATURE$/m);

        expect({ code: run.code, output: run.output }).toEqual({ code: 0, output: expect.stringMatching(/^submit: 202 ACCEPTED$/m) });
        const orderNo = /^query: (\S+) success$/m.exec(run.output)?.[1];
        expect(orderNo).toBeDefined();
        expect(output).toMatch(new RegExp(`^callback: verified ${orderNo} success$`, 'm'));

        // The service saw the callback acknowledged: the example answered `success` after verifying it.
        const deliveries = await fetch(`${service.url}/admin/v1/orders/${orderNo}/callbacks`, {
          headers: { authorization: `Bearer ${TEST_ENV.ADMIN_TOKEN}` },
        }).then((r) => r.json() as Promise<{ data: unknown }>);
        expect(deliveries.data).toMatchObject({ state: 'acknowledged' });
      } finally {
        await receiver?.stop();
      }
    });

    it(`${example.language}: names a missing ${example.required} and stops, without a stack trace`, async () => {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TOPUP_BASE_URL: service.url,
        TOPUP_API_KEY: 'key',
        TOPUP_APP_SECRET: 'secret',
        TOPUP_CALLBACK_URL: `http://127.0.0.1:${await freePort()}/topup/callback`,
      };
      delete env[example.required];
      const run = await start(example.command, env).done;
      expect(run.code).toBe(2);
      expect(run.output).toMatch(new RegExp(`^missing ${example.required}: .+$`, 'm'));
      expect(run.output).toContain('see examples/README.md');
      expect(run.output).not.toMatch(RAW_FAILURE);
    });

    it(`${example.language}: says what it waits for, for how long, and why it gave up on an order that stays processing`, async () => {
      const env = {
        ...(await demoMerchantEnv(`http://127.0.0.1:${await freePort()}/topup/callback`)),
        // A sandbox account whose upstream never answers.
        TOPUP_ACCOUNT_ID: '12345999',
        TOPUP_WAIT_SECONDS: '2',
      };
      const run = await start(example.command, env).done;
      const orderNo = /^waiting: up to 2 s for (\S+) to be final \(success or failed\), asking every 0\.5 s$/m.exec(run.output)?.[1];
      expect({ orderNo, output: run.output }).toEqual({ orderNo: expect.any(String), output: run.output });
      expect(run.code).toBe(1);
      expect(run.output).toMatch(new RegExp(`^query: ${orderNo} processing$`, 'm'));
      expect(run.output).toMatch(new RegExp(`^gave up: ${orderNo} still processing after 2 s \\(an account ending in 999 .+\\)$`, 'm'));
      expect(run.output).not.toMatch(RAW_FAILURE);
    });
  }
});

/** A callback with every header, signed with a secret that is not the merchant's, sent as soon as something listens. */
async function forgedCallback(callbackUrl: string, apiKey: string): Promise<number> {
  const body = JSON.stringify({ order_no: 'FORGED', out_trade_no: 'forged', status: 'success' });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = newNonce();
  const headers = {
    'content-type': 'application/json',
    'x-api-key': apiKey,
    'x-timestamp': timestamp,
    'x-nonce': nonce,
    'x-signature': sign('not-the-app-secret', timestamp, nonce, new URL(callbackUrl).pathname, body),
  };
  for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 10))) {
    try {
      const response = await fetch(callbackUrl, { method: 'POST', headers, body });
      await response.arrayBuffer();
      return response.status;
    } catch (error) {
      if (Date.now() > deadline) throw error; // not listening yet
    }
  }
}

function start(command: string[], env: NodeJS.ProcessEnv, timeoutMs = 90_000): { done: Promise<{ code: number | null; output: string }> } {
  const done = new Promise<{ code: number | null; output: string }>((resolvePromise, reject) => {
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command.join(' ')} did not finish within ${timeoutMs / 1000} s:\n${output}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, output });
    });
  });
  return { done };
}

async function startReceiver(command: string[], env: NodeJS.ProcessEnv, port: number) {
  const child = spawn(command[0], command.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
    if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited:\n${output}`);
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break;
    if (Date.now() > deadline) throw new Error(`${command.join(' ')} did not listen within 15 s:\n${output}`);
  }
  return {
    async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
      for (const deadline = Date.now() + timeoutMs; !pattern.test(output) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 100));
      return output;
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
