import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/**
 * The built-in upstream (CONTRACT §4), a real HTTP server speaking
 * docs/upstream-protocol.md. The outcome depends on the end of account_id:
 *   000  refused: INVALID_ACCOUNT
 *   001  refused: UPSTREAM_REJECTED
 *   999  accepted, then no reply ever (the caller times out: result unknown)
 *   503  503 twice, then delivered
 *   else delivered after `deliveryDelayMs`
 * Requests are de-duplicated on Idempotency-Key: a repeat never delivers
 * twice, it gets the first request's outcome. Deliveries are counted per
 * order_no so tests can prove "at most once".
 */
export interface UpstreamSimulator {
  url: string;
  /** Deliveries made, per order_no (never more than one if the key works). */
  deliveries: ReadonlyMap<string, number>;
  /** Requests received, per order_no. */
  requests: ReadonlyMap<string, number>;
  stop(): Promise<void>;
}

type Outcome = { status: 'delivered'; reference: string } | { status: 'failed'; code: string; message: string };

interface Entry {
  outcome?: Promise<Outcome>;
  unavailableAnswers: number;
  settled?: Outcome;
  hanging: boolean;
}

export async function startUpstreamSimulator(options: { port?: number; host?: string; deliveryDelayMs: number }): Promise<UpstreamSimulator> {
  const entries = new Map<string, Entry>();
  const deliveries = new Map<string, number>();
  const requests = new Map<string, number>();

  const decide = (orderNo: string, accountId: string): Promise<Outcome> | 'hang' | 'unavailable' => {
    const entry = entries.get(orderNo) ?? { unavailableAnswers: 0, hanging: false };
    entries.set(orderNo, entry);
    if (entry.outcome) return entry.outcome;
    if (accountId.endsWith('999')) {
      entry.hanging = true;
      return 'hang';
    }
    if (accountId.endsWith('503') && entry.unavailableAnswers < 2) {
      entry.unavailableAnswers++;
      return 'unavailable';
    }
    entry.outcome = (async (): Promise<Outcome> => {
      if (accountId.endsWith('000')) return { status: 'failed', code: 'INVALID_ACCOUNT', message: 'The account does not exist' };
      if (accountId.endsWith('001')) return { status: 'failed', code: 'UPSTREAM_REJECTED', message: 'The provider rejected the top-up' };
      await new Promise((r) => setTimeout(r, options.deliveryDelayMs));
      deliveries.set(orderNo, (deliveries.get(orderNo) ?? 0) + 1);
      return { status: 'delivered', reference: `SIM-${orderNo}` };
    })();
    void entry.outcome.then((o) => (entry.settled = o));
    return entry.outcome;
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => reply(res, 500, { error: 'simulator failure' }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    if (req.method === 'POST' && url.pathname === '/v1/topups') {
      const body = JSON.parse((await readBody(req)) || '{}') as { order_no?: string; account_id?: string };
      const orderNo = req.headers['idempotency-key'];
      if (typeof orderNo !== 'string' || orderNo !== body.order_no || typeof body.account_id !== 'string') {
        return reply(res, 400, { error: 'Idempotency-Key must equal order_no; account_id is required' });
      }
      requests.set(orderNo, (requests.get(orderNo) ?? 0) + 1);
      const decision = decide(orderNo, body.account_id);
      if (decision === 'hang') return; // never answered; the connection is closed on stop
      if (decision === 'unavailable') return reply(res, 503, { error: 'temporarily unavailable' });
      return reply(res, 200, await decision);
    }
    const status = /^\/v1\/topups\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && status) {
      const entry = entries.get(decodeURIComponent(status[1]));
      if (!entry) return reply(res, 404, { status: 'not_found' });
      return reply(res, 200, entry.settled ?? { status: 'pending' });
    }
    if (req.method === 'GET' && url.pathname === '/v1/stats') {
      return reply(res, 200, { deliveries: Object.fromEntries(deliveries), requests: Object.fromEntries(requests) });
    }
    reply(res, 404, { error: 'no such route' });
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    deliveries,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) throw new Error('body too large');
  }
  return text;
}
