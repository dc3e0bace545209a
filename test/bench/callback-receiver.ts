/**
 * The end-to-end phase's merchant: a callback endpoint that acknowledges
 * everything and notes when it first saw each order. It runs in a process of
 * its own, as a merchant's endpoint is on a machine of its own: in the load
 * generator's process its work (hundreds of callbacks a second) delayed the
 * load's timers and replies, which counted as the service's latency.
 *
 * POST (any path): a callback, answered 200 "success".
 * GET /seen: {"count": orders called back at least once}.
 * GET /seen?prefix=P: {"count", "times": [ms since the epoch of the first
 * callback of each order whose out_trade_no starts with P]}.
 *
 * Started by end-to-end.ts; PORT (default 0: any free port). Once listening it
 * prints "RECEIVER_LISTENING <port>" on stdout.
 */
import http from 'node:http';
import { listen } from './signed-http';

const firstSeen = new Map<string, { at: number; outTradeNo: string }>();

function noteCallback(raw: Buffer): void {
  try {
    const { order_no, out_trade_no } = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    if (typeof order_no === 'string' && !firstSeen.has(order_no)) firstSeen.set(order_no, { at: Date.now(), outTradeNo: String(out_trade_no) });
  } catch {
    // not a callback; acknowledged all the same
  }
}

function seen(url: URL): { count: number; times?: number[] } {
  const prefix = url.searchParams.get('prefix');
  if (prefix === null) return { count: firstSeen.size };
  const times = [...firstSeen.values()].filter((c) => c.outTradeNo.startsWith(prefix)).map((c) => c.at);
  return { count: firstSeen.size, times };
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET') {
    const url = new URL(request.url ?? '/', 'http://receiver');
    if (url.pathname !== '/seen') return void response.writeHead(404).end();
    return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen(url)));
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    noteCallback(Buffer.concat(chunks));
    response.writeHead(200, { 'content-type': 'text/plain' }).end('success');
  });
});
listen(server, 'RECEIVER');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
