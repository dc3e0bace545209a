import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { csvField } from '../../shared/spreadsheet-csv';
import { isoTimestamp, parseInstant } from '../../shared/clock';
import { REPORT_COLUMNS } from '../upstream/upstream.port';
import { PerOrderCounts } from './per-order-counts';
import { MemorySimulatorStore, SimulatedTopUp, SimulatorReply, SimulatorStore } from './simulator-store';

/**
 * The built-in upstream (CONTRACT §4), a real HTTP server speaking
 * docs/upstream-protocol.md. The outcome depends on the end of account_id:
 *   000  refused: INVALID_ACCOUNT
 *   001  refused: UPSTREAM_REJECTED
 *   999  accepted, then no reply ever (the caller times out: result unknown)
 *   503  503 twice, then delivered
 *   else delivered after `deliveryDelayMs`
 * A refusal waits `failureDelayMs` (0 by default) before it is answered, so
 * a test can make refusals slower than the service's timeout, as a slow
 * delivery does for deliveries: the service then knows no result, and the
 * transaction report (GET /v1/reports/transactions) later says it failed.
 * The outcome is decided and recorded in the store when an order is first
 * received, so a repeat of the Idempotency-Key gets the same answer and never
 * delivers twice, and a status query answers from the same record. With a
 * durable store that holds across restarts; with the in-memory one an order
 * it does not know may have come before a restart, so it answers "unknown",
 * never "not received". Deliveries are counted per order_no so tests can
 * prove "at most once" (for the latest 100,000 orders: PerOrderCounts).
 */
export interface UpstreamSimulator {
  url: string;
  /** Deliveries made by this process, per order_no (never more than one if the key works). */
  deliveries: ReadonlyMap<string, number>;
  /** Requests received by this process, per order_no. */
  requests: ReadonlyMap<string, number>;
  /** Status queries (GET /v1/topups/{order_no}) received by this process, per order_no. */
  statusQueries: ReadonlyMap<string, number>;
  /** Status queries being answered now, and the most at once since `peak` was last set (tests reset it to 0). */
  statusInFlight: { now: number; peak: number };
  stop(): Promise<void>;
}

export interface UpstreamSimulatorOptions {
  port?: number;
  host?: string;
  deliveryDelayMs: number;
  /** How long a refusal takes to be answered; 0 by default. */
  failureDelayMs?: number;
  /** How long a status query takes to be answered; 0 by default (a slow upstream for re-query tests). */
  statusDelayMs?: number;
  /** Where received orders are kept; in memory by default. */
  store?: SimulatorStore;
}

const textOrUndefined = (value: unknown) => (typeof value === 'string' ? value : undefined);

const FORGETFUL = 'this simulator keeps its orders in memory: it cannot tell whether it received this one before it was restarted';

export async function startUpstreamSimulator(options: UpstreamSimulatorOptions): Promise<UpstreamSimulator> {
  const store = options.store ?? new MemorySimulatorStore();
  const deliveries = new PerOrderCounts();
  const requests = new PerOrderCounts();
  const statusQueries = new PerOrderCounts();
  const statusInFlight = { now: 0, peak: 0 };
  // 503s say "nothing done", so they need no record; counted per process.
  const unavailableAnswers = new PerOrderCounts();

  const receive = async (orderNo: string, accountId: string, amount?: string, currency?: string): Promise<SimulatedTopUp | 'unavailable'> => {
    const known = await store.find(orderNo);
    if (known) return known;
    if (accountId.endsWith('503') && (unavailableAnswers.get(orderNo) ?? 0) < 2) {
      unavailableAnswers.count(orderNo);
      return 'unavailable';
    }
    const reply = outcomeFor(orderNo, accountId);
    const delayMs = reply.status === 'delivered' ? options.deliveryDelayMs : reply.status === 'failed' ? (options.failureDelayMs ?? 0) : 0;
    const { kept, first } = await store.record(orderNo, { reply, readyAt: Date.now() + delayMs, amount, currency });
    if (first && reply.status === 'delivered') deliveries.count(orderNo);
    return kept;
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => reply(res, 500, { error: 'simulator failure' }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    if (req.method === 'POST' && url.pathname === '/v1/topups') {
      const body = JSON.parse((await readBody(req)) || '{}') as { order_no?: string; account_id?: string; amount?: unknown; currency?: unknown };
      const orderNo = req.headers['idempotency-key'];
      if (typeof orderNo !== 'string' || orderNo !== body.order_no || typeof body.account_id !== 'string') {
        return reply(res, 400, { error: 'Idempotency-Key must equal order_no; account_id is required' });
      }
      requests.count(orderNo);
      const topUp = await receive(orderNo, body.account_id, textOrUndefined(body.amount), textOrUndefined(body.currency));
      if (topUp === 'unavailable') return reply(res, 503, { error: 'temporarily unavailable' });
      if (topUp.reply.status === 'pending') return; // never answered; the connection is closed on stop
      await new Promise((r) => setTimeout(r, Math.max(0, topUp.readyAt - Date.now())));
      return reply(res, 200, topUp.reply);
    }
    const status = /^\/v1\/topups\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && status) {
      const orderNo = decodeURIComponent(status[1]);
      statusQueries.count(orderNo);
      statusInFlight.now++;
      statusInFlight.peak = Math.max(statusInFlight.peak, statusInFlight.now);
      try {
        if (options.statusDelayMs) await new Promise((r) => setTimeout(r, options.statusDelayMs));
        const topUp = await store.find(orderNo);
        if (!topUp) return store.durable ? reply(res, 404, { status: 'not_found' }) : reply(res, 200, { status: 'unknown', message: FORGETFUL });
        return reply(res, 200, Date.now() < topUp.readyAt ? { status: 'pending' } : topUp.reply);
      } finally {
        statusInFlight.now--;
      }
    }
    if (req.method === 'GET' && url.pathname === '/v1/reports/transactions') {
      return transactionReport(url, res);
    }
    if (req.method === 'GET' && url.pathname === '/v1/stats') {
      return reply(res, 200, {
        deliveries: Object.fromEntries(deliveries),
        requests: Object.fromEntries(requests),
        status_queries: Object.fromEntries(statusQueries),
        status_in_flight_peak: statusInFlight.peak,
      });
    }
    reply(res, 404, { error: 'no such route' });
  }

  /** Every top-up whose result was ready in [from, to): what the simulator recorded, never a pending one (accounts ending 999). */
  async function transactionReport(url: URL, res: ServerResponse): Promise<void> {
    const from = parseInstant(url.searchParams.get('from') ?? '');
    const to = parseInstant(url.searchParams.get('to') ?? '');
    if (!from || !to || from >= to) {
      return reply(res, 400, { error: 'from and to must be ISO 8601 instants with an offset, from before to' });
    }
    // What has happened, not what will: a result whose ready time is still ahead is not complete yet.
    const completed = await store.completedBetween(from.getTime(), Math.min(to.getTime(), Date.now() + 1));
    const lines = completed.map((t) =>
      [t.orderNo, t.reply.status, t.amount ?? '', t.currency ?? '', t.reply.status === 'delivered' ? t.reply.reference : '', isoTimestamp(new Date(t.readyAt))]
        .map(csvField)
        .join(','),
    );
    res.writeHead(200, { 'Content-Type': 'text/csv; charset=utf-8' }).end(`${[REPORT_COLUMNS.join(','), ...lines].join('\r\n')}\r\n`);
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    deliveries,
    requests,
    statusQueries,
    statusInFlight,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function outcomeFor(orderNo: string, accountId: string): SimulatorReply {
  if (accountId.endsWith('999')) return { status: 'pending' };
  if (accountId.endsWith('000')) return { status: 'failed', code: 'INVALID_ACCOUNT', message: 'The account does not exist' };
  if (accountId.endsWith('001')) return { status: 'failed', code: 'UPSTREAM_REJECTED', message: 'The provider rejected the top-up' };
  return { status: 'delivered', reference: `SIM-${orderNo}` };
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
