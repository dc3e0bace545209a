import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** Callbacks on, to local endpoints, with a short schedule: 100..500 ms. */
export const CALLBACK_ENV = {
  CALLBACK_CONCURRENCY: '8',
  CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true',
  CALLBACK_RETRY_DELAYS: '100ms,200ms,300ms,400ms,500ms',
  CALLBACK_TIMEOUT_MS: '1000',
};

export interface ReceivedCallback {
  at: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply = { status: number; body?: string; delayMs?: number } | 'hang';

/**
 * A merchant's callback endpoint on localhost: records every request and
 * answers as the test scripts it, per order and per attempt (1-based).
 */
export async function callbackEndpoint(answer: (orderNo: string, attempt: number) => Reply) {
  const received: ReceivedCallback[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ at: Date.now(), path: req.url ?? '', headers: req.headers, body });
      let orderNo = '';
      try {
        orderNo = JSON.parse(body).order_no;
      } catch {
        // counted anyway
      }
      const attempt = received.filter((r) => r.body.includes(`"order_no":"${orderNo}"`)).length;
      const reply = answer(orderNo, attempt);
      if (reply === 'hang') return;
      setTimeout(() => res.writeHead(reply.status).end(reply.body ?? ''), reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/topup`,
    received,
    forOrder: (orderNo: string) => received.filter((r) => r.body.includes(`"order_no":"${orderNo}"`)),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
