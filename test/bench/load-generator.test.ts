import http from 'node:http';
import { AddressInfo } from 'node:net';
import { runLoad } from './load-generator';

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
      const at = Number(process.hrtime.bigint()) / 1e6;
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
    const begun = Number(process.hrtime.bigint()) / 1e6;
    const result = await runLoad({
      baseUrl: url,
      concurrency: 8,
      ratePerSecond: rate,
      durationMs: 1000,
      merchants: [{ apiKey: 'key', appSecret: 'secret' }],
      skuId: 'SKU',
      tag: 'open-loop',
    });

    expect(result.requests).toBeGreaterThanOrEqual(rate - 1);
    expect(result.requests).toBeLessThanOrEqual(rate + 1);
    expect(result.accepted).toBe(result.requests);
    expect(arrivals.size).toBe(result.requests + result.acceptedOutside);
    // Request i is due i/rate seconds after the start.
    const lateness = [...arrivals].map(([i, at]) => at - begun - (i * 1000) / rate).sort((a, b) => a - b);
    expect(lateness[0]).toBeGreaterThanOrEqual(0);
    expect(lateness[Math.floor(lateness.length / 2)]).toBeLessThan(5);
  });
});
