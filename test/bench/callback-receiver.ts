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
import { listen, parseObject, readBody } from './signed-http';

const firstSeen = new Map<string, { at: number; outTradeNo: string }>();

/** Notes an order's first callback; a body that is not a callback is acknowledged all the same. */
function noteCallback(raw: Buffer | undefined): void {
  const body = raw && parseObject(raw);
  if (typeof body?.order_no === 'string' && !firstSeen.has(body.order_no))
    firstSeen.set(body.order_no, { at: Date.now(), outTradeNo: String(body.out_trade_no) });
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
  void readBody(request)
    .then(noteCallback, () => undefined)
    .then(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('success'));
});
listen(server, 'RECEIVER');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
