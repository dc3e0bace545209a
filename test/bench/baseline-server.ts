/**
 * The benchmark's baseline: the least a server must do for a signed submit,
 * on bare node:http. It reads the body (64 KiB at most), parses it as a JSON
 * object, checks the four auth headers, verifies the HMAC-SHA256 over
 * timestamp\nnonce\npath\nbody with one known secret in constant time, and
 * answers 202 with a small JSON body. No database, no framework, no ledger.
 *
 * Started by submit-bench.ts as a child process with BASELINE_API_KEY and
 * BASELINE_APP_SECRET; PORT (default 0: any free port). Once listening it
 * prints "BASELINE_LISTENING <port>" on stdout.
 */
import http from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { sign, TIMESTAMP_TOLERANCE_SECONDS } from '../../src/merchant-client/signing';

const MAX_BODY_BYTES = 64 * 1024;
const AUTH_HEADERS = ['x-api-key', 'x-timestamp', 'x-nonce', 'x-signature'] as const;

const apiKey = requiredEnv('BASELINE_API_KEY');
const appSecret = requiredEnv('BASELINE_APP_SECRET');

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is required`);
    process.exit(78);
  }
  return value;
}

function reply(response: http.ServerResponse, status: number, payload: object): void {
  const text = JSON.stringify(payload);
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

const refuse = (response: http.ServerResponse, status: number, code: string) => reply(response, status, { success: false, code, message: code });

const server = http.createServer((request, response) => {
  if (request.method !== 'POST') return refuse(response, 405, 'METHOD_NOT_ALLOWED');
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  });
  request.on('end', () => {
    if (tooLarge) return refuse(response, 413, 'PAYLOAD_TOO_LARGE');
    const raw = Buffer.concat(chunks);

    const values: string[] = [];
    for (const name of AUTH_HEADERS) {
      const value = request.headers[name];
      if (typeof value !== 'string' || value === '') return refuse(response, 401, 'MISSING_AUTH_HEADER');
      values.push(value);
    }
    const [key, timestamp, nonce, signature] = values;
    if (key !== apiKey) return refuse(response, 401, 'INVALID_API_KEY');
    if (!/^[0-9]{1,15}$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
      return refuse(response, 401, 'TIMESTAMP_EXPIRED');
    }
    const path = (request.url ?? '').split('?')[0];
    const expected = Buffer.from(sign(appSecret, timestamp, nonce, path, raw), 'utf8');
    const received = Buffer.from(signature, 'utf8');
    if (received.length !== expected.length || !timingSafeEqual(received, expected)) return refuse(response, 401, 'INVALID_SIGNATURE');

    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return refuse(response, 400, 'INVALID_JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse(response, 400, 'INVALID_JSON');
    const outTradeNo = (body as Record<string, unknown>).out_trade_no;
    reply(response, 202, { success: true, code: 'ACCEPTED', data: { out_trade_no: typeof outTradeNo === 'string' ? outTradeNo : null, status: 'processing' } });
  });
});

server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  console.log(`BASELINE_LISTENING ${typeof address === 'object' && address ? address.port : ''}`);
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
