import http from 'node:http';
import { AddressInfo } from 'node:net';
import { runLoad } from './load-generator';

/** This process's monotonic clock, in milliseconds. */
const now = () => Number(process.hrtime.bigint()) / 1e6;

/** One of the probe's 1 ms timers: when it was due and when it fired (ms, this process's clock). */
interface TimerFiring {
  due: number;
  fired: number;
}

/**
 * Runs `load` while firing a 1 ms timer after another and noting how late each
 * fires: on a machine busy with other suites every timer is late, the load
 * generator's with them, and only what goes beyond that is the generator's own.
 */
async function withTimerProbe<T>(load: () => Promise<T>): Promise<{ result: T; firings: TimerFiring[] }> {
  const firings: TimerFiring[] = [];
  let loading = true;
  const probe = (async () => {
    while (loading) {
      const due = now() + 1;
      await new Promise((r) => setTimeout(r, 1));
      firings.push({ due, fired: now() });
    }
  })();
  try {
    return { result: await load(), firings };
  } finally {
    loading = false;
    await probe;
  }
}

/**
 * How late anything due at `due` had to be, by the probe: a timer due at or
 * before it that fired after it shows this process could not run until then
 * (a pause of the event loop, or of the whole process on a busy machine).
 */
function pauseAt(due: number, firings: readonly TimerFiring[]): number {
  let until = due;
  for (const firing of firings) if (firing.due <= due && firing.fired > until) until = firing.fired;
  return until - due;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * The open loop sends request i when it is due, i/rate seconds after the
 * start, never before; between requests it waits on a timer (see runLoad),
 * so one may go out up to about a millisecond late.
 */
describe('npm run bench: the open-loop load generator', () => {
  let server: http.Server;
  let url: string;
  /** Arrival time (ms, hrtime) of each request by its sequence number. */
  const arrivals = new Map<number, number>();

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      const at = now();
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { out_trade_no } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { out_trade_no: string };
        arrivals.set(Number(out_trade_no.split('-').pop()), at);
        response.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends each request at its due time, none early, and counts the window', async () => {
    const rate = 200;
    // runLoad's own start, and so every due time, comes after this.
    const begun = now();
    const { result, firings } = await withTimerProbe(() =>
      runLoad({
        baseUrl: url,
        concurrency: 8,
        ratePerSecond: rate,
        durationMs: 1000,
        merchants: [{ apiKey: 'key', appSecret: 'secret' }],
        skuId: 'SKU',
        tag: 'open-loop',
      }),
    );

    expect(result.requests).toBeGreaterThanOrEqual(rate - 1);
    expect(result.requests).toBeLessThanOrEqual(rate + 1);
    expect(result.accepted).toBe(result.requests);
    expect(arrivals.size).toBe(result.requests + result.acceptedOutside);
    // Request i is due i/rate seconds after the start.
    const due = (i: number) => begun + (i * 1000) / rate;
    const lateness = [...arrivals].map(([i, at]) => at - due(i));
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    // Beyond a pause of the whole process at its due time (after one, every request due meanwhile goes out together),
    // the median request is late by the timer's millisecond at most.
    const ownLateness = [...arrivals].map(([i, at]) => at - due(i) - pauseAt(due(i), firings));
    expect(median(ownLateness)).toBeLessThan(5);
  });
});

describe('npm run bench: what the load generator counts', () => {
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    // Request n: dropped mid-exchange when n % 5 == 4, refused (402) when n % 3 == 1, else accepted.
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const { out_trade_no } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { out_trade_no: string };
        const n = Number(out_trade_no.split('-').pop());
        if (n % 5 === 4) request.socket.destroy();
        else if (n % 3 === 1) response.writeHead(402, { 'content-type': 'application/json' }).end('{"code":"INSUFFICIENT_BALANCE"}');
        else response.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts 202s as accepted, and refusals and dropped connections as failures, with a sample of each refusal', async () => {
    const result = await runLoad({
      baseUrl: url,
      concurrency: 2,
      requests: 10,
      merchants: [{ apiKey: 'key', appSecret: 'secret' }],
      skuId: 'SKU',
      tag: 'counted',
    });

    // 0..9: dropped 4 and 9; refused 1 and 7; accepted the other six.
    expect(result.requests).toBe(10);
    expect(result.accepted).toBe(6);
    expect(Object.fromEntries(result.failures)).toEqual({ '402': 2, 'ERR:ECONNRESET': 2 });
    expect(result.samples.get('402')).toBe('{"code":"INSUFFICIENT_BALANCE"}');
    expect(result.otherSuccess.size).toBe(0);
    expect(result.latenciesMs).toHaveLength(10);
  });
});

describe('npm run bench: a stall of every reply', () => {
  let server: http.Server;
  let url: string;
  /** While set, every reply waits until it is cleared. */
  let stalled: Promise<void> | undefined;

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        void (stalled ?? Promise.resolve()).then(() => response.writeHead(202, { 'content-type': 'application/json' }).end('{}'));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const load = () =>
    runLoad({
      baseUrl: url,
      concurrency: 4,
      ratePerSecond: 200,
      durationMs: 1000,
      merchants: [{ apiKey: 'key', appSecret: 'secret' }],
      skuId: 'SKU',
      tag: 'stall',
    });

  /** The longest the process's own timers were held up while `firings` were taken. */
  const longestPause = (firings: readonly TimerFiring[]) => Math.max(...firings.map(({ due, fired }) => fired - due));

  it('reports the longest a request waited with no reply coming meanwhile: short when replies flow, the stall when none came', async () => {
    const { result: flowing, firings } = await withTimerProbe(load);
    // Well under the 300 ms stall below, beyond the longest the process's own timers were held up meanwhile (a busy CI
    // machine alone once paused the replies for 110 ms).
    expect(flowing.longestSilenceMs).toBeLessThan(100 + longestPause(firings));

    // 400 ms into the window, no reply at all for 300 ms.
    const timer = setTimeout(() => {
      stalled = new Promise<void>((resolve) => setTimeout(resolve, 300));
      void stalled.then(() => (stalled = undefined));
    }, 400);
    const { result: stalling, firings: stallFirings } = await withTimerProbe(load);
    clearTimeout(timer);
    expect(stalling.longestSilenceMs).toBeGreaterThanOrEqual(280);
    // The 300 ms stall with as much again to spare, beyond the longest the process itself was held up meanwhile.
    expect(stalling.longestSilenceMs).toBeLessThan(600 + longestPause(stallFirings));
    expect(stalling.accepted).toBe(stalling.requests);
  });
});
