import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, IncomingHttpHeaders } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { newNonce, sign, stringToSign, verifyCallback, VerifyCallbackInput } from './signing';

/**
 * Known answers come from the openssl binary at test time, fed bytes built here
 * by hand, so a mistake in stringToSign cannot hide behind itself.
 */
function openssl(key: string, data: Buffer): string {
  const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', key], { input: data }).toString().trim();
  return out.slice(out.lastIndexOf(' ') + 1); // "HMAC-SHA2-256(stdin)= <hex>"
}

const SECRET = 's3cr3t-app-secret';
const TS = '1767225600';
const NONCE = '3f2a9c0d8e7b41a6b5c4d3e2f1a0b9c8';
const PATH = '/api/v2/topup/submit';
const lines = (body: Buffer) => Buffer.concat([Buffer.from(`${TS}\n${NONCE}\n${PATH}\n`, 'latin1'), body]);

describe('stringToSign', () => {
  it('joins the four lines with "\\n" and adds no trailing line feed', () => {
    expect(stringToSign(TS, NONCE, PATH, '{}').toString('utf8')).toBe(`${TS}\n${NONCE}\n${PATH}\n{}`);
    expect(stringToSign(TS, NONCE, PATH, '').toString('utf8')).toBe(`${TS}\n${NONCE}\n${PATH}\n`);
  });

  it('appends a Buffer body byte for byte, even bytes that are not UTF-8', () => {
    const body = Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0xe9, 0x0d]);
    expect(stringToSign(TS, NONCE, PATH, body).equals(lines(body))).toBe(true);
  });

  it('takes a string body as its UTF-8 bytes', () => {
    const body = '{"name":"Café 🎮"}';
    expect(stringToSign(TS, NONCE, PATH, body).equals(lines(Buffer.from(body, 'utf8')))).toBe(true);
  });
});

describe('sign', () => {
  const cases: Array<[string, Buffer]> = [
    ['an empty body', Buffer.alloc(0)],
    ['{}', Buffer.from('{}')],
    ['a submit body', Buffer.from('{"out_trade_no":"A-1","sku_id":"mlbb-86","account_id":"12345678","account_fields":{"server_id":"2001"}}')],
    ['UTF-8 text', Buffer.from('{"note":"Café – 東京 🎮"}', 'utf8')],
    ['the same text in Latin-1 (different bytes)', Buffer.from('{"note":"Café"}', 'latin1')],
    ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0xe9, 0x0d, 0x0a])],
    ['pretty-printed JSON with CRLF and a trailing line feed', Buffer.from('{\r\n  "a": 1\r\n}\n')],
  ];

  it.each(cases)('matches openssl for %s', (_name, body) => {
    expect(sign(SECRET, TS, NONCE, PATH, body)).toBe(openssl(SECRET, lines(body)));
  });

  it('signs a string body like its UTF-8 bytes', () => {
    const text = '{"note":"Café – 東京 🎮"}';
    expect(sign(SECRET, TS, NONCE, PATH, text)).toBe(openssl(SECRET, lines(Buffer.from(text, 'utf8'))));
  });

  it('is lowercase hex, 64 characters', () => {
    expect(sign(SECRET, TS, NONCE, PATH, '{}')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes with every input', () => {
    const base = sign(SECRET, TS, NONCE, PATH, '{}');
    expect(
      new Set([
        base,
        sign(`${SECRET}x`, TS, NONCE, PATH, '{}'),
        sign(SECRET, '1767225601', NONCE, PATH, '{}'),
        sign(SECRET, TS, `${NONCE}0`, PATH, '{}'),
        sign(SECRET, TS, NONCE, '/api/v2/topup/query', '{}'),
        sign(SECRET, TS, NONCE, PATH, '{ }'),
      ]).size,
    ).toBe(6);
  });
});

describe('newNonce', () => {
  it('is 32 hex characters and fresh each time', () => {
    const nonces = Array.from({ length: 100 }, newNonce);
    for (const nonce of nonces) expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(nonces).size).toBe(100);
  });
});

describe('verifyCallback', () => {
  const CALLBACK_PATH = '/topup/callback';
  const NOW_MS = Number(TS) * 1000 + 250; // the callback arrived 0.25 s after it was signed
  const BODY =
    '{"order_no":"T01","out_trade_no":"A-1","status":"success","amount":"1.20","account_id":"12345678","fail_code":null,"fail_reason":null,"completed_at":"2026-01-01T00:00:00.000+00:00"}';

  /** A callback as node's http module would hand it over: lowercase header names. */
  function callback(over: { timestamp?: string; body?: string } = {}): VerifyCallbackInput {
    const timestamp = over.timestamp ?? TS;
    const rawBody = Buffer.from(over.body ?? BODY);
    const headers: IncomingHttpHeaders = {
      'content-type': 'application/json',
      'x-api-key': 'merchant-key',
      'x-timestamp': timestamp,
      'x-nonce': NONCE,
      'x-signature': sign(SECRET, timestamp, NONCE, CALLBACK_PATH, rawBody),
    };
    return { appSecret: SECRET, path: CALLBACK_PATH, headers, rawBody, now: NOW_MS };
  }
  const withHeader = (input: VerifyCallbackInput, name: string, value: string | undefined): VerifyCallbackInput => ({
    ...input,
    headers: { ...(input.headers as IncomingHttpHeaders), [name]: value },
  });

  it('accepts a valid callback', () => {
    expect(verifyCallback(callback())).toEqual({ ok: true });
  });

  it('accepts the raw body as a string too', () => {
    expect(verifyCallback({ ...callback(), rawBody: BODY })).toEqual({ ok: true });
  });

  it('agrees with openssl on the string it signs', () => {
    const input = callback();
    const expected = openssl(SECRET, Buffer.from(`${TS}\n${NONCE}\n${CALLBACK_PATH}\n${BODY}`, 'utf8'));
    expect((input.headers as IncomingHttpHeaders)['x-signature']).toBe(expected);
  });

  it.each<[string, (input: VerifyCallbackInput) => VerifyCallbackInput]>([
    ['timestamp', (i) => withHeader(i, 'x-timestamp', String(Number(TS) + 1))],
    ['nonce', (i) => withHeader(i, 'x-nonce', `${NONCE.slice(0, -1)}0`)],
    ['path', (i) => ({ ...i, path: '/topup/callback2' })],
    ['path (a query string is not the path)', (i) => ({ ...i, path: `${CALLBACK_PATH}?x=1` })],
    ['body', (i) => ({ ...i, rawBody: Buffer.from(BODY.replace('"1.20"', '"9.20"')) })],
    ['body (re-serialised after parsing)', (i) => ({ ...i, rawBody: JSON.stringify(JSON.parse(BODY), null, 2) })],
    ['signature (one character)', (i) => withHeader(i, 'x-signature', flipLast((i.headers as IncomingHttpHeaders)['x-signature'] as string))],
    ['signature (uppercase)', (i) => withHeader(i, 'x-signature', ((i.headers as IncomingHttpHeaders)['x-signature'] as string).toUpperCase())],
    ['signature (truncated)', (i) => withHeader(i, 'x-signature', ((i.headers as IncomingHttpHeaders)['x-signature'] as string).slice(0, 63))],
    ['signature (garbage of another length)', (i) => withHeader(i, 'x-signature', 'not hex at all')],
    ['secret', (i) => ({ ...i, appSecret: `${SECRET}x` })],
  ])('refuses a tampered %s as INVALID_SIGNATURE', (_field, tamper) => {
    expect(verifyCallback(tamper(callback()))).toEqual({ ok: false, reason: 'INVALID_SIGNATURE' });
  });

  it.each(['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'])('refuses a missing %s as MISSING_HEADER', (name) => {
    expect(verifyCallback(withHeader(callback(), name, undefined))).toEqual({ ok: false, reason: 'MISSING_HEADER' });
    expect(verifyCallback(withHeader(callback(), name, ''))).toEqual({ ok: false, reason: 'MISSING_HEADER' });
  });

  it.each([
    ['301 s old', -301],
    ['301 s in the future', 301],
    ['an hour old', -3600],
  ])('refuses a timestamp %s as TIMESTAMP_EXPIRED', (_name, offset) => {
    expect(verifyCallback(callback({ timestamp: String(Number(TS) + offset) }))).toEqual({ ok: false, reason: 'TIMESTAMP_EXPIRED' });
  });

  it.each([-299, 299])('accepts a timestamp %i s away', (offset) => {
    expect(verifyCallback(callback({ timestamp: String(Number(TS) + offset) }))).toEqual({ ok: true });
  });

  it.each([-300, 300])('accepts a timestamp exactly %i s away, and not a millisecond more', (offset) => {
    const input = callback({ timestamp: String(Number(TS) + offset) });
    const exactly = Number(TS) * 1000;
    expect(verifyCallback({ ...input, now: exactly })).toEqual({ ok: true });
    expect(verifyCallback({ ...input, now: exactly - Math.sign(offset) })).toEqual({ ok: false, reason: 'TIMESTAMP_EXPIRED' });
  });

  it.each(['1767225600000', '1767225600.5', '-1', ' 1767225600', 'abc'])('refuses the timestamp %p as TIMESTAMP_EXPIRED', (timestamp) => {
    expect(verifyCallback(callback({ timestamp }))).toEqual({ ok: false, reason: 'TIMESTAMP_EXPIRED' });
  });

  it('honours toleranceSeconds and defaults now to the real clock', () => {
    expect(verifyCallback({ ...callback({ timestamp: String(Number(TS) - 60) }), toleranceSeconds: 59 })).toEqual({ ok: false, reason: 'TIMESTAMP_EXPIRED' });
    const fresh = String(Math.floor(Date.now() / 1000));
    const { now: _ignored, ...input } = callback({ timestamp: fresh });
    expect(verifyCallback(input)).toEqual({ ok: true });
  });

  describe('header names', () => {
    it('are case-insensitive in a plain object', () => {
      const input = callback();
      const h = input.headers as IncomingHttpHeaders;
      const headers = { 'X-Api-Key': h['x-api-key'], 'X-TIMESTAMP': h['x-timestamp'], 'x-NoNcE': h['x-nonce'], 'X-Signature': h['x-signature'] };
      expect(verifyCallback({ ...input, headers })).toEqual({ ok: true });
    });

    it('are case-insensitive in a fetch Headers', () => {
      const input = callback();
      const headers = new Headers();
      for (const [name, value] of Object.entries(input.headers as IncomingHttpHeaders)) headers.set(name.toUpperCase(), value as string);
      expect(verifyCallback({ ...input, headers })).toEqual({ ok: true });
      headers.delete('x-nonce');
      expect(verifyCallback({ ...input, headers })).toEqual({ ok: false, reason: 'MISSING_HEADER' });
    });

    it('take a one-element array as the value, and refuse a header given twice', () => {
      const input = callback();
      const signature = (input.headers as IncomingHttpHeaders)['x-signature'] as string;
      expect(verifyCallback(withHeader(input, 'x-signature', [signature] as unknown as string))).toEqual({ ok: true });
      expect(verifyCallback(withHeader(input, 'x-signature', [signature, signature] as unknown as string))).toEqual({ ok: false, reason: 'MISSING_HEADER' });
      expect(verifyCallback(withHeader(input, 'X-Signature', signature))).toEqual({ ok: false, reason: 'MISSING_HEADER' });
    });
  });

  describe('the seenNonce hook', () => {
    it('refuses a nonce it has seen, and is asked only about authentic callbacks', () => {
      const seen = new Set<string>();
      const seenNonce = jest.fn((nonce: string) => seen.has(nonce) || (seen.add(nonce), false));

      expect(verifyCallback({ ...callback(), rawBody: 'forged', seenNonce })).toEqual({ ok: false, reason: 'INVALID_SIGNATURE' });
      expect(seenNonce).not.toHaveBeenCalled();

      expect(verifyCallback({ ...callback(), seenNonce })).toEqual({ ok: true });
      expect(verifyCallback({ ...callback(), seenNonce })).toEqual({ ok: false, reason: 'NONCE_REUSED' });
      expect(seenNonce.mock.calls).toEqual([[NONCE], [NONCE]]);
    });
  });
});

describe('docs/signing.md example', () => {
  const doc = readFileSync(join(__dirname, '../../docs/signing.md'), 'utf8');
  const snippet = /```bash\n(req_path=[\s\S]*?)```/.exec(doc)?.[1] ?? '';
  const sigLine = /^sig=\$\(.*$/m.exec(snippet)?.[0] ?? '';

  it('has a curl snippet with a sig= line', () => {
    expect(snippet).toContain('curl');
    expect(sigLine).toContain('openssl dgst -sha256 -hmac "$TOPUP_APP_SECRET"');
  });

  it.each([
    ['{}'],
    ['{"out_trade_no":"A-1","sku_id":"mlbb-86","account_id":"12345678","account_fields":{"server_id":"2001"}}'],
    ['{"note":"Café – 東京 🎮 100%s \\n"}'],
    ['{\n  "pretty": true\n}\n'],
  ])('its sig= line computes what sign() does for the body %p', (body) => {
    const env = { ...process.env, TOPUP_APP_SECRET: SECRET, ts: TS, nonce: NONCE, req_path: PATH, body };
    const shell = execFileSync('bash', ['-c', `${sigLine}\nprintf '%s' "$sig"`], { env }).toString();
    expect(shell).toBe(sign(SECRET, TS, NONCE, PATH, body));
  });

  it('sends a request, with curl, that verifies', async () => {
    const received: Array<{ path: string; headers: IncomingHttpHeaders; body: Buffer }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"success":true,"code":"OK","data":{}}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      // The snippet as published, with the credentials it reads from the environment.
      const env = { ...process.env, TOPUP_API_KEY: 'key-1', TOPUP_APP_SECRET: SECRET, TOPUP_BASE_URL: `http://127.0.0.1:${port}` };
      const { stdout } = await promisify(execFile)('bash', ['-c', snippet], { env });
      expect(stdout).toBe('{"success":true,"code":"OK","data":{}}');

      expect(received).toHaveLength(1);
      const [request] = received;
      expect(request.path).toBe('/api/v2/balance');
      expect(request.body.toString()).toBe('{}');
      expect(request.headers['x-api-key']).toBe('key-1');
      expect(request.headers['content-type']).toBe('application/json');
      expect(verifyCallback({ appSecret: SECRET, path: request.path, headers: request.headers, rawBody: request.body })).toEqual({ ok: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

function flipLast(hex: string): string {
  return hex.slice(0, -1) + (hex.endsWith('0') ? '1' : '0');
}
