import { rawExchange, RawReply } from '../support/raw-http';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 1500;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
/** Node checks for late requests on an interval, so a timeout fires a little after it is due. */
const SLACK_MS = 1500;

function expectRequestTimeout(reply: RawReply, timeoutMs: number) {
  expect(reply.statusLine).toMatch(/^HTTP\/1\.1 408 /);
  expect(reply.headers['content-type']).toMatch(/^application\/json/);
  expect(JSON.parse(reply.body)).toEqual(expect.objectContaining({ success: false, code: 'REQUEST_TIMEOUT', message: expect.any(String) }));
  expect(reply.closedByServer).toBe(true);
  expect(reply.ms).toBeGreaterThanOrEqual(timeoutMs * 0.9);
  expect(reply.ms).toBeLessThan(timeoutMs + SLACK_MS);
}

/**
 * A client that stops sending halfway holds a connection and a request until
 * a timeout ends it. With the timeouts set small here, it gets a 408 in the
 * envelope and a closed connection within about that time, not the minutes
 * of Node's defaults, and the service keeps serving others meanwhile.
 */
describe('HTTP timeouts', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase({
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    }));
  });
  afterAll(async () => teardown());

  it('a partial body: 408 REQUEST_TIMEOUT after the request timeout, while others are served', async () => {
    const stalled = rawExchange(service.url, 'POST /api/v2/topup/submit HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"out_trade', {
      waitMs: 60_000,
    });
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${service.url}/health`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS);
    expectRequestTimeout(await stalled, REQUEST_TIMEOUT_MS);
  });

  it('partial headers: 408 REQUEST_TIMEOUT after the headers timeout', async () => {
    const reply = await rawExchange(service.url, 'POST /api/v2/topup/submit HTTP/1.1\r\nHost: x\r\nContent-Le', { waitMs: 60_000 });
    expectRequestTimeout(reply, HEADERS_TIMEOUT_MS);
  });

  it('a slow body that arrives within the request timeout is answered as usual', async () => {
    const head = 'POST /api/v2/balance HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n';
    const reply = await rawExchange(service.url, [head, '{', '}'], { waitMs: 10_000 });
    expect(reply.statusLine).toMatch(/^HTTP\/1\.1 401 /);
    expect(JSON.parse(reply.body)).toMatchObject({ code: 'MISSING_AUTH_HEADER' });
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout, without a reply of its own', async () => {
    const reply = await rawExchange(service.url, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n', { waitMs: 60_000 });
    expect(reply.statusLine).toMatch(/^HTTP\/1\.1 200 /);
    expect(reply.raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(reply.closedByServer).toBe(true);
    // Node keeps the socket a second longer than the timeout it announces (Keep-Alive: timeout=1).
    expect(reply.headers['keep-alive']).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    expect(reply.ms).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS + 1000 + SLACK_MS);
  });
});
