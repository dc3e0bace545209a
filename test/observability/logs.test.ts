import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import { adminClient } from '../back-office/admin-client';
import { ChildService, spawnService } from '../support/child-service';
import { provisionOverHttp } from '../support/http-provisioning';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { rawExchange } from '../support/raw-http';
import { TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Line = Record<string, unknown>;

/** The service's output, every line parsed: a line that is not JSON fails the test. */
const lines = (service: ChildService): Line[] =>
  service
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        throw new Error(`not a JSON line: ${line}`);
      }
    });

/** Waits for the lines matching `match` (access lines are written as the reply closes, a moment after the client has it). */
async function linesWhere(service: ChildService, match: (line: Line) => boolean, count = 1): Promise<Line[]> {
  for (let i = 0; ; i++) {
    const found = lines(service).filter(match);
    if (found.length >= count || i === 50) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('logs: LOG_FORMAT=json, one JSON object per line, the request id in each line of a request', () => {
  let db: TestDatabase;
  let service: ChildService;
  let merchant: TestMerchant;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = await spawnService(db, { LOG_FORMAT: 'json', HOST: '127.0.0.1' });
    merchant = await provisionOverHttp(service.url);
  });
  afterAll(async () => {
    await service.kill('SIGTERM');
    await db.drop();
  });

  it('says where it really listens', async () => {
    const port = new URL(service.url).port;
    expect(lines(service)).toContainEqual(
      expect.objectContaining({ context: 'Main', message: `listening on http://127.0.0.1:${port}; event store: postgres` }),
    );
  });

  it("returns the client's X-Request-Id when it is a safe one, and a new id otherwise, on every reply", async () => {
    const own = await signedFetch(service, merchant, { path: '/api/v2/balance', headers: { 'X-Request-Id': 'client-trace:42/a' } });
    expect(own.status).toBe(200);
    expect(own.headers.get('x-request-id')).toBe('client-trace:42/a');
    for (const unsafe of ['has space', 'x'.repeat(129), 'tab\there']) {
      const reply = await fetch(`${service.url}/health`, { headers: { 'X-Request-Id': unsafe } });
      expect(reply.headers.get('x-request-id')).toMatch(UUID);
    }
    const ids = new Set<string | null>();
    for (const reply of [
      await fetch(`${service.url}/no/such/route`),
      await fetch(`${service.url}/api/v2/balance`),
      await fetch(`${service.url}/admin/v1/merchants/${merchant.merchantId}`),
      await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body: '[' }),
    ]) {
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.headers.get('x-request-id')).toMatch(UUID);
      ids.add(reply.headers.get('x-request-id'));
    }
    expect(ids.size).toBe(4);
    // Bytes that are not HTTP get an id too, on the raw reply.
    const malformed = await rawExchange(service.url, 'GET /health HTTP/1.1\r\nHost: x\r\nBad Header : 1\r\n\r\n');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['x-request-id']).toMatch(UUID);
    const noHost = await rawExchange(service.url, 'GET /health HTTP/1.1\r\nX-Request-Id: no-host-1\r\n\r\n');
    expect(noHost.status).toBe(400);
    expect(noHost.headers['x-request-id']).toBe('no-host-1');
  });

  it('writes one access line per request: method, route pattern, status, duration, merchant; no signature, secret or token', async () => {
    const body = JSON.stringify({ out_trade_no: 'LOG-1', sku_id: 'mlbb-86', account_id: '12345678', account_fields: { server_id: '7' } });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const realSignature = createHmac('sha256', merchant.appSecret).update(`${timestamp}\nlog-nonce-1\n/api/v2/topup/submit\n${body}`).digest('hex');
    const accepted = await signedFetch(service, merchant, {
      path: '/api/v2/topup/submit',
      body,
      timestamp,
      nonce: 'log-nonce-1',
      signature: realSignature,
      headers: { 'X-Request-Id': 'submit-1' },
    });
    const signature = 'f'.repeat(64);
    expect(accepted.status).toBe(202);
    const forged = await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body, signature, headers: { 'X-Request-Id': 'forged-1' } });
    expect(forged.status).toBe(401);
    const admin = adminClient(service.url);
    expect((await admin('GET', `/admin/v1/merchants/${merchant.merchantId}`, undefined, { headers: { 'X-Request-Id': 'admin-1' } })).status).toBe(200);

    const [submitLine] = await linesWhere(service, (l) => l.request_id === 'submit-1');
    expect(await linesWhere(service, (l) => l.request_id === 'submit-1')).toHaveLength(1);
    expect(submitLine).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      level: 'info',
      pid: service.process.pid,
      context: 'Access',
      request_id: 'submit-1',
      message: 'POST /api/v2/topup/submit 202',
      method: 'POST',
      route: '/api/v2/topup/submit',
      path: '/api/v2/topup/submit',
      status: 202,
      duration_ms: expect.any(Number),
      merchant_id: merchant.merchantId,
    });
    expect(submitLine.duration_ms as number).toBeGreaterThan(0);
    const [forgedLine] = await linesWhere(service, (l) => l.request_id === 'forged-1');
    expect(forgedLine).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE', merchant_id: merchant.merchantId });
    const [adminLine] = await linesWhere(service, (l) => l.request_id === 'admin-1');
    expect(adminLine).toMatchObject({ route: '/admin/v1/merchants/:merchant_id', path: `/admin/v1/merchants/${merchant.merchantId}`, status: 200 });

    const output = service.output();
    for (const secret of [merchant.appSecret, realSignature, signature, TEST_ENV.ADMIN_TOKEN]) {
      expect(output).not.toContain(secret);
    }
  });

  it('logs an unexpected error with the id of the request it happened in, as one line with its stack', async () => {
    const client = new Client(db.config);
    await client.connect();
    await client.query('alter table rm_orders rename to rm_orders_away');
    try {
      const failed = await signedFetch(service, merchant, {
        path: '/api/v2/topup/query',
        body: JSON.stringify({ out_trade_no: 'nope' }),
        headers: { 'X-Request-Id': 'fails-1' },
      });
      expect(failed.status).toBe(500);
    } finally {
      await client.query('alter table rm_orders_away rename to rm_orders');
      await client.end();
    }
    const related = await linesWhere(service, (l) => l.request_id === 'fails-1', 2);
    expect(related).toEqual([
      expect.objectContaining({ level: 'error', context: 'Http', message: 'unexpected error', stack: expect.stringContaining('rm_orders') }),
      expect.objectContaining({ context: 'Access', status: 500, code: 'INTERNAL_ERROR' }),
    ]);
  });

  it('puts the request id on a line that code deep in the request logs without being given it, as on the access line', async () => {
    const admin = adminClient(service.url);
    const created = await admin(
      'POST',
      '/admin/v1/merchants',
      { name: 'Local shop', callback_url: 'http://127.0.0.1:9/cb' },
      { headers: { 'X-Request-Id': 'private-cb-1' } },
    );
    expect(created.status).toBe(201);
    const related = await linesWhere(service, (l) => l.request_id === 'private-cb-1', 2);
    expect(related).toEqual([
      expect.objectContaining({ level: 'warn', context: 'Merchants', message: expect.stringContaining('callbacks to http://127.0.0.1:9/cb will be refused') }),
      expect.objectContaining({ context: 'Access', route: '/admin/v1/merchants', status: 201 }),
    ]);
  });

  it("starts without Nest's wiring at the default level: no line per module or route", () => {
    const contexts = new Set(lines(service).map((l) => l.context));
    expect([...contexts].filter((c) => ['InstanceLoader', 'RoutesResolver', 'RouterExplorer'].includes(String(c)))).toEqual([]);
    expect(contexts).toContain('NestApplication');
  });

  it('says at shutdown what it waits for, and when it has stopped', async () => {
    // A request racing the signal: answered or refused, either way not a failure of the test.
    const racing = signedFetch(service, merchant, { path: '/api/v2/balance' }).catch(() => undefined);
    await service.kill('SIGTERM');
    await racing;
    const messages = lines(service).map((l) => String(l.message));
    expect(messages).toContainEqual(expect.stringMatching(/^SIGTERM: stopping\. Waiting for the requests in flight/));
    expect(messages).toContainEqual(expect.stringMatching(/^stopped accepting connections; waiting for \d+ requests in flight$/));
    expect(messages[messages.length - 1]).toBe('closed the event store and the database connections: stopped');
  });
});
