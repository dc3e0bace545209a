import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { HttpUpstream } from '../../src/fulfilment/upstream/http-upstream';
import { TopUpRequest } from '../../src/fulfilment/upstream/upstream.port';
import { PostgresSimulatorStore } from '../../src/fulfilment/simulator/simulator-store';
import { simulatorMigrations } from '../../src/fulfilment/simulator/simulator-store.migrations';
import { startUpstreamSimulator } from '../../src/fulfilment/simulator/upstream-simulator';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { createTestDatabase } from '../support/test-database';

type Handler = (body: string, res: import('node:http').ServerResponse) => void;

/** A throwaway upstream whose reply each case scripts. */
async function scriptedUpstream(handler: Handler): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const request: TopUpRequest = {
  orderNo: 'TORDER',
  skuId: 'sku-1',
  route: 'default',
  accountId: '12345678',
  accountFields: { server_id: '1' },
  amount: '1.20',
  currency: 'USD',
};
const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_, res) =>
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));

describe('HTTP upstream adapter: every outcome is classified', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.closeAllConnections?.() ?? s.close()));
  const upstreamFor = async (handler: Handler, timeoutMs = 300) => {
    const { url, server } = await scriptedUpstream(handler);
    servers.push(server);
    return new HttpUpstream(url, { timeoutMs, connectTimeoutMs: 300 });
  };

  it.each<[string, Handler, object]>([
    ['delivered', json(200, { status: 'delivered', reference: 'R1' }), { kind: 'delivered', reference: 'R1' }],
    [
      'refused: invalid account',
      json(200, { status: 'failed', code: 'INVALID_ACCOUNT', message: 'no such account' }),
      { kind: 'refused', failCode: 'INVALID_ACCOUNT', failReason: 'no such account' },
    ],
    ['refused: rejected', json(200, { status: 'failed', code: 'UPSTREAM_REJECTED', message: 'no' }), { kind: 'refused', failCode: 'UPSTREAM_REJECTED' }],
    [
      'refused without a message',
      json(200, { status: 'failed', code: 'SKU_UNAVAILABLE' }),
      { kind: 'refused', failCode: 'SKU_UNAVAILABLE', failReason: 'SKU_UNAVAILABLE' },
    ],
    ['503: nothing done, retry', json(503, { error: 'busy' }), { kind: 'retryable' }],
    ['500 after acceptance', json(500, 'oops'), { kind: 'unknown', evidence: 'HTTP 500: oops' }],
    ['a redirect is not followed', json(302, '', { Location: 'http://127.0.0.1:1/elsewhere' }), { kind: 'unknown' }],
    ['malformed JSON', json(200, '{"status": "deliv'), { kind: 'unknown' }],
    ['an unknown status', json(200, { status: 'maybe' }), { kind: 'unknown' }],
    ['an unknown fail code', json(200, { status: 'failed', code: 'WHATEVER' }), { kind: 'unknown' }],
    ['a JSON array', json(200, [1]), { kind: 'unknown' }],
    ['an oversized body', json(200, JSON.stringify({ status: 'delivered', pad: 'x'.repeat(70_000) })), { kind: 'unknown' }],
    ['a 201 with a delivered body', json(201, { status: 'delivered' }), { kind: 'unknown' }],
  ])('%s', async (_, handler, expected) => {
    expect(await (await upstreamFor(handler)).topUp(request)).toMatchObject(expected);
  });

  it('a timeout after sending is unknown', async () => {
    const upstream = await upstreamFor(() => undefined, 200);
    expect(await upstream.topUp(request)).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('no reply within 200 ms') });
  });

  it('the timeout runs to the end of the reply: a body that stops coming is unknown', async () => {
    const upstream = await upstreamFor((_, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' }).write('{"status":');
    }, 200);
    expect(await upstream.topUp(request)).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('no reply within 200 ms') });
  });

  it('a connection cut mid-reply is unknown', async () => {
    const upstream = await upstreamFor((_, res) => {
      res.writeHead(200, { 'Content-Length': '100' }).write('{"status":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    expect((await upstream.topUp(request)).kind).toBe('unknown');
  });

  it('a refused connection is retryable: the request never left', async () => {
    const { url, server } = await scriptedUpstream(() => undefined);
    await new Promise((r) => server.close(r));
    const upstream = new HttpUpstream(url, { timeoutMs: 300, connectTimeoutMs: 300 });
    expect(await upstream.topUp(request)).toMatchObject({ kind: 'retryable', reason: expect.stringContaining('ECONNREFUSED') });
  });

  it('sends the user and password of the base URL as Basic credentials', async () => {
    let authorization: string | undefined;
    const { url, server } = await scriptedUpstream(() => undefined);
    servers.push(server);
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      authorization = req.headers.authorization;
      req.resume();
      req.on('end', () => json(200, { status: 'delivered' })('', res));
    });
    const upstream = new HttpUpstream(url.replace('http://', 'http://gate%40way:p%3Ass@'), { timeoutMs: 300, connectTimeoutMs: 300 });
    expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered' });
    expect(authorization).toBe(`Basic ${Buffer.from('gate@way:p:ss').toString('base64')}`);
  });

  it('sends every top-up and status query under a base URL that has a path of its own, with or without its trailing slash', async () => {
    const seen: string[] = [];
    const { url, server } = await scriptedUpstream(() => undefined);
    servers.push(server);
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => json(200, { status: req.method === 'GET' ? 'pending' : 'delivered' })('', res));
    });
    for (const base of [`${url}/gateway`, `${url}/gateway/`]) {
      const upstream = new HttpUpstream(base, { timeoutMs: 300, connectTimeoutMs: 300 });
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered' });
      expect(await upstream.topUp({ ...request, orderNo: 'TOTHER' })).toMatchObject({ kind: 'delivered' });
      expect(await upstream.status('T/1')).toEqual({ kind: 'pending' });
    }
    const once = ['POST /gateway/v1/topups', 'POST /gateway/v1/topups', 'GET /gateway/v1/topups/T%2F1'];
    expect(seen).toEqual([...once, ...once]);
  });

  it('sends the order_no as the idempotency key, with the order in the body', async () => {
    let seen: { key?: string; body?: unknown } = {};
    const { url, server } = await scriptedUpstream(() => undefined);
    servers.push(server);
    server.removeAllListeners('request');
    server.on('request', (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen = { key: req.headers['idempotency-key'] as string, body: JSON.parse(body) };
        json(200, { status: 'delivered' })(body, res);
      });
    });
    await new HttpUpstream(url, { timeoutMs: 300, connectTimeoutMs: 300 }).topUp(request);
    expect(seen).toEqual({
      key: 'TORDER',
      body: {
        order_no: 'TORDER',
        sku_id: 'sku-1',
        route: 'default',
        account_id: '12345678',
        account_fields: { server_id: '1' },
        amount: '1.20',
        currency: 'USD',
      },
    });
  });

  describe('kept connections', () => {
    /** An upstream that answers per the script, by the request's number (0-based), and counts connections. */
    const countingUpstream = async (script: (n: number, res: import('node:http').ServerResponse, server: Server) => void) => {
      let requests = 0;
      let connections = 0;
      const { url, server } = await scriptedUpstream((_, res) => script(requests++, res, server));
      servers.push(server);
      server.on('connection', () => connections++);
      return { upstream: new HttpUpstream(url, { timeoutMs: 300, connectTimeoutMs: 300 }), counts: () => ({ requests, connections }) };
    };
    const delivered = (n: number, res: import('node:http').ServerResponse) => json(200, { status: 'delivered', reference: `R${n}` })('', res);

    it('top-ups one after another share one connection', async () => {
      const { upstream, counts } = await countingUpstream(delivered);
      for (let i = 0; i < 3; i++) expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered', reference: `R${i}` });
      expect(counts()).toEqual({ requests: 3, connections: 1 });
    });

    it('a kept connection cut before any reply is tried once on a fresh one, whose answer is the answer', async () => {
      const { upstream, counts } = await countingUpstream((n, res) => (n === 1 ? res.socket!.destroy() : delivered(n, res)));
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered', reference: 'R0' });
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered', reference: 'R2' });
      expect(counts()).toEqual({ requests: 3, connections: 2 });
    });

    it('cut, then no fresh connection: unknown, never retryable, since the first may have arrived', async () => {
      const { upstream, counts } = await countingUpstream((n, res, server) => {
        if (n === 0) return delivered(n, res);
        server.close();
        res.socket!.destroy();
      });
      await upstream.topUp(request);
      const outcome = await upstream.topUp(request);
      expect(outcome).toMatchObject({ kind: 'unknown', reason: expect.stringMatching(/on a kept connection, then ECONNREFUSED.* on a new one/) });
      expect(counts()).toEqual({ requests: 2, connections: 1 });
    });

    it('a new connection cut before any reply is unknown, and not sent again', async () => {
      const { upstream, counts } = await countingUpstream((_, res) => res.socket!.destroy());
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'unknown' });
      expect(counts()).toEqual({ requests: 1, connections: 1 });
    });

    it('top-ups in flight at once each have a connection, kept for the next ones', async () => {
      const { upstream, counts } = await countingUpstream((n, res) => setTimeout(() => delivered(n, res), 20));
      for (let round = 0; round < 3; round++) {
        const outcomes = await Promise.all(Array.from({ length: 5 }, () => upstream.topUp(request)));
        for (const outcome of outcomes) expect(outcome).toMatchObject({ kind: 'delivered' });
      }
      expect(counts()).toEqual({ requests: 15, connections: 5 });
    });

    it('no reply on a kept connection is unknown, and not sent again', async () => {
      const { upstream, counts } = await countingUpstream((n, res) => (n === 0 ? delivered(n, res) : undefined));
      await upstream.topUp(request);
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'unknown', reason: expect.stringContaining('no reply within 300 ms') });
      expect(counts()).toEqual({ requests: 2, connections: 1 });
    });

    it('a reply slower than the reuse window still arrives, on a kept connection too', async () => {
      const { url, server } = await scriptedUpstream((_, res) => setTimeout(() => delivered(0, res), 1_300));
      servers.push(server);
      const upstream = new HttpUpstream(url, { timeoutMs: 3_000, connectTimeoutMs: 300 });
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered' });
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'delivered' });
    });

    it('a shorter Keep-Alive timeout the upstream announces is honoured, a second before it ends', async () => {
      const { upstream, counts } = await countingUpstream(delivered);
      const server = servers[servers.length - 1];
      // Node's server announces Keep-Alive: timeout=1: one second less leaves nothing to reuse.
      server.keepAliveTimeout = 1_000;
      await upstream.topUp(request);
      await upstream.topUp(request);
      expect(counts()).toEqual({ requests: 2, connections: 2 });
    });

    it('close() ends the kept connections', async () => {
      const { upstream, counts } = await countingUpstream(delivered);
      const closed: Promise<void>[] = [];
      servers[servers.length - 1].on('connection', (socket: import('node:net').Socket) => closed.push(new Promise((r) => socket.once('close', () => r()))));
      await upstream.topUp(request);
      await upstream.close();
      await Promise.all(closed);
      expect(counts()).toEqual({ requests: 1, connections: 1 });
      expect(await upstream.topUp(request)).toMatchObject({ kind: 'retryable' });
    });

    it('a connection idle longer than a second is not reused', async () => {
      const { upstream, counts } = await countingUpstream(delivered);
      await upstream.topUp(request);
      await new Promise((r) => setTimeout(r, 1_200));
      await upstream.topUp(request);
      expect(counts()).toEqual({ requests: 2, connections: 2 });
    });
  });

  describe('against the simulator', () => {
    it('speaks the same protocol, de-duplicates on the key, and answers status queries', async () => {
      const simulator = await startUpstreamSimulator({ deliveryDelayMs: 10 });
      try {
        const upstream = new HttpUpstream(simulator.url, { timeoutMs: 300, connectTimeoutMs: 300 });
        const outcome = (accountId: string, orderNo: string) => upstream.topUp({ ...request, orderNo, accountId });
        expect(await outcome('1', 'A')).toMatchObject({ kind: 'delivered' });
        expect(await outcome('1', 'A')).toMatchObject({ kind: 'delivered' });
        expect(simulator.deliveries.get('A')).toBe(1);
        expect(await outcome('x000', 'B')).toMatchObject({ kind: 'refused', failCode: 'INVALID_ACCOUNT' });
        expect(await outcome('x001', 'C')).toMatchObject({ kind: 'refused', failCode: 'UPSTREAM_REJECTED' });
        expect(await outcome('x503', 'D')).toMatchObject({ kind: 'retryable' });
        expect(await outcome('x503', 'D')).toMatchObject({ kind: 'retryable' });
        expect(await outcome('x503', 'D')).toMatchObject({ kind: 'delivered' });
        expect(await outcome('x999', 'E')).toMatchObject({ kind: 'unknown' });
        expect(await upstream.status('A')).toMatchObject({ kind: 'delivered' });
        expect(await upstream.status('B')).toMatchObject({ kind: 'refused', failCode: 'INVALID_ACCOUNT' });
        expect(await upstream.status('E')).toEqual({ kind: 'pending' });
        // In memory it cannot know what came before a restart: never "not received".
        expect(await upstream.status('never')).toMatchObject({ kind: 'unknown', evidence: expect.stringContaining('keeps its orders in memory') });
      } finally {
        await simulator.stop();
      }
    });

    it('with a durable store, answers the same after a restart, and not_received only for what it never got', async () => {
      const db = await createTestDatabase();
      try {
        await migrate(db.pool, simulatorMigrations);
        const store = new PostgresSimulatorStore(db.pool);
        const first = await startUpstreamSimulator({ deliveryDelayMs: 10, store });
        const before = new HttpUpstream(first.url, { timeoutMs: 300, connectTimeoutMs: 300 });
        expect(await before.topUp({ ...request, orderNo: 'A', accountId: '1' })).toMatchObject({ kind: 'delivered' });
        expect(await before.topUp({ ...request, orderNo: 'E', accountId: 'x999' })).toMatchObject({ kind: 'unknown' });
        await first.stop();

        const second = await startUpstreamSimulator({ deliveryDelayMs: 10, store });
        try {
          const after = new HttpUpstream(second.url, { timeoutMs: 300, connectTimeoutMs: 300 });
          expect(await after.status('A')).toMatchObject({ kind: 'delivered', reference: 'SIM-A' });
          expect(await after.status('E')).toEqual({ kind: 'pending' });
          expect(await after.status('never')).toEqual({ kind: 'not_received' });
          // A repeat of the key after the restart gets the first outcome and delivers nothing more.
          expect(await after.topUp({ ...request, orderNo: 'A', accountId: '1' })).toMatchObject({ kind: 'delivered' });
          expect(second.deliveries.get('A')).toBeUndefined();
        } finally {
          await second.stop();
        }
      } finally {
        await db.drop();
      }
    });
  });
});
