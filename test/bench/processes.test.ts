import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { coresUsed, cpuSnapshot, startListening, startNodeChild, threadSecondsByName } from './processes';

const withSchedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`) ? it : it.skip;

describe('npm run bench: who used the machine', () => {
  withSchedstat("counts the server's main thread running while it computes, and its wait for a CPU apart", () => {
    const before = cpuSnapshot(process.pid, undefined)!;
    const started = Date.now();
    while (Date.now() - started < 300) Math.sqrt(Math.random());
    const after = cpuSnapshot(process.pid, undefined)!;
    const used = coresUsed(before, after, (Date.now() - started) / 1000);

    expect(used.mainThread).toBeDefined();
    // Busy the whole window: it ran or waited for a CPU nearly all of it, and ran at least some.
    expect(used.mainThread!.running).toBeGreaterThan(0.1);
    expect(used.mainThread!.running + used.mainThread!.waiting).toBeGreaterThan(0.8);
    expect(used.mainThread!.running).toBeLessThanOrEqual(1.05);
  });
});

describe('npm run bench:writes: CPU by thread', () => {
  const withProc = existsSync(`/proc/${process.pid}/task`) ? it : it.skip;

  withProc("counts a busy main thread's CPU under the name the kernel gives it, and nothing under another thread's", () => {
    const mainName = readFileSync(`/proc/${process.pid}/task/${process.pid}/comm`, 'utf8').trim();
    const before = threadSecondsByName(process.pid);
    const started = Date.now();
    while (Date.now() - started < 400) Math.sqrt(Math.random());
    const after = threadSecondsByName(process.pid);

    expect(after.get(mainName)! - before.get(mainName)!).toBeGreaterThan(0.1);
    // Every other name (V8's helpers, the thread pool) grew by less than the main thread's busy loop.
    for (const [name, seconds] of after) if (name !== mainName) expect(seconds - (before.get(name) ?? 0)).toBeLessThan(0.2);
  });
});

describe('npm run bench: its children run TypeScript as a build runs', () => {
  it("without ts-node's repl and domain module, with the decorators' metadata NestJS injects by", async () => {
    const child = startNodeChild('runtime probe', 'test/bench/runtime-probe.ts', process.env);
    try {
      const [, report] = await child.waitForLine(/^RUNTIME (.*)$/, 30_000);
      expect(JSON.parse(report)).toEqual({ domain: false, paramtypes: ['Dependency'] });
    } finally {
      await child.stop();
    }
  });
});

describe("npm run bench: the peers' CPU apart from the load generator's", () => {
  const withProc = existsSync(`/proc/${process.pid}/stat`) ? it : it.skip;

  withProc(
    'counts a peer process under peers, not under the load generator',
    async () => {
      // The load generator is a fresh process that sleeps while a peer computes
      // for 400 ms: this jest worker's own background work (its collector, the
      // next suite's compiling) would blur the figure for the sleeping side.
      const generator = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', SLEEPING_GENERATOR], { cwd: __dirname });
      let output = '';
      generator.stdout.on('data', (chunk) => (output += chunk));
      generator.stderr.on('data', (chunk) => (output += chunk));
      const [code] = await once(generator, 'exit');
      expect({ code, output }).toEqual({ code: 0, output: expect.stringMatching(/^\{.*\}\n$/) });
      const used = JSON.parse(output) as { bench: number; peers: number };
      expect(used.peers).toBeGreaterThan(0.1);
      expect(used.bench).toBeLessThan(used.peers);
    },
    30_000,
  );
});

/** Spawns a peer that computes for 400 ms, sleeps 600 ms itself, and prints what `coresUsed` counted for each side. */
const SLEEPING_GENERATOR = `
  const { spawn } = require('node:child_process');
  const { coresUsed, cpuSnapshot } = require('./processes');
  const peer = spawn(process.execPath, ['-e', 'const end = Date.now() + 400; while (Date.now() < end) Math.sqrt(Math.random()); setTimeout(() => {}, 5000);']);
  const before = cpuSnapshot(process.pid, undefined, [peer.pid]);
  setTimeout(() => {
    const after = cpuSnapshot(process.pid, undefined, [peer.pid]);
    const used = coresUsed(before, after, 0.6);
    peer.kill();
    process.stdout.write(JSON.stringify({ bench: used.bench, peers: used.peers }) + '\\n');
  }, 600);
`;

describe("npm run bench: the end-to-end phase's callback receiver", () => {
  it('acknowledges every callback and notes when it first saw each order, by out_trade_no prefix', async () => {
    const { child, url } = await startListening('callback receiver', 'test/bench/callback-receiver.ts', { ...process.env, PORT: '0' }, 'RECEIVER');
    try {
      const callback = async (orderNo: string, outTradeNo: string) => {
        const response = await fetch(`${url}/callback`, { method: 'POST', body: JSON.stringify({ order_no: orderNo, out_trade_no: outTradeNo }) });
        return { status: response.status, body: await response.text() };
      };
      const sentFrom = Date.now();
      expect(await callback('ORD1', 'run-a-1')).toEqual({ status: 200, body: 'success' });
      expect(await callback('ORD1', 'run-a-1')).toEqual({ status: 200, body: 'success' });
      expect(await callback('ORD2', 'run-b-1')).toEqual({ status: 200, body: 'success' });
      const notJson = await fetch(`${url}/callback`, { method: 'POST', body: 'not json' });
      expect(notJson.status).toBe(200);

      const all = (await (await fetch(`${url}/seen`)).json()) as { count: number; times?: number[] };
      expect(all).toEqual({ count: 2 });
      const runA = (await (await fetch(`${url}/seen?prefix=run-a-`)).json()) as { count: number; times: number[] };
      expect(runA.count).toBe(2);
      expect(runA.times).toHaveLength(1);
      expect(runA.times[0]).toBeGreaterThanOrEqual(sentFrom);
      expect(runA.times[0]).toBeLessThanOrEqual(Date.now());
      expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
    } finally {
      await child.stop();
    }
  }, 60_000);
});
