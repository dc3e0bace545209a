import { rawExchange } from '../support/raw-http';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

const SUBMIT = '/api/v2/topup/submit';
const BODY = '{"out_trade_no":"M-1"}';

/**
 * Requests that are not valid HTTP/1.1, sent byte for byte. Node's parser
 * refuses them before any route runs; the client still gets the contract's
 * failure envelope, and the connection is closed because nothing after the
 * bad bytes can be trusted to start a request.
 */
describe('malformed HTTP', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  it.each<[string, number, string, string | string[], { endAfterWrite?: boolean }?]>([
    ['a 16 KiB header', 431, 'HEADERS_TOO_LARGE', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(16 * 1024)}\r\n\r\n`],
    ['a space before a header colon', 400, 'MALFORMED_HTTP', 'GET /health HTTP/1.1\r\nHost: x\r\nX-Api-Key : k\r\n\r\n'],
    ['a folded header (obs-fold)', 400, 'MALFORMED_HTTP', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n'],
    ['a bare CR', 400, 'MALFORMED_HTTP', 'GET /health HTTP/1.1\r\nHost: x\rX-A: 1\r\n\r\n'],
    ['no Host header in HTTP/1.1', 400, 'MALFORMED_HTTP', `POST ${SUBMIT} HTTP/1.1\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`],
    ['a control byte in a header value', 400, 'MALFORMED_HTTP', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'],
    // The headers go first, so the request is already with the merchant gateway when the body turns out bad.
    ['a bad chunk size', 400, 'MALFORMED_HTTP', [`POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n`, 'zz\r\nabc\r\n0\r\n\r\n']],
    [
      'Content-Length with Transfer-Encoding: chunked',
      400,
      'MALFORMED_HTTP',
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
    ],
    // The bytes the Content-Length frames are a whole request, and it gets its own answer; the rest is dropped.
    ['a Content-Length shorter than the body', 401, 'MISSING_AUTH_HEADER', `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n${BODY}`],
    [
      'a Content-Length longer than the body, then the client stops sending',
      400,
      'MALFORMED_HTTP',
      `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n${BODY}`,
      { endAfterWrite: true },
    ],
    ['two different Content-Lengths', 400, 'MALFORMED_HTTP', `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`],
    ['a Content-Length that is not a number', 400, 'MALFORMED_HTTP', `POST ${SUBMIT} HTTP/1.1\r\nHost: x\r\nContent-Length: 2x\r\n\r\n{}`],
    ['an unknown HTTP version', 400, 'MALFORMED_HTTP', 'GET /health HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['not HTTP at all', 400, 'MALFORMED_HTTP', 'hello\r\n\r\n'],
    // Valid HTTP/1.0 (where Host is optional): the ordinary contract answer.
    ['no Host header in HTTP/1.0', 401, 'MISSING_AUTH_HEADER', `POST /api/v2/balance HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}`],
  ])('%s: %i %s in the envelope, then the connection closes', async (_name, status, code, payload, options = {}) => {
    const reply = await rawExchange(service.url, payload, options);
    expect(reply.statusLine).toMatch(new RegExp(`^HTTP/1\\.[01] ${status} `));
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(reply.body);
    expect(body).toEqual(expect.objectContaining({ success: false, code, message: expect.any(String) }));
    expect(reply.closedByServer).toBe(true);
  });

  it('still serves ordinary requests afterwards', async () => {
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
  });
});
