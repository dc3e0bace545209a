/**
 * The benchmark's baseline: the least a server must do for a signed submit,
 * on bare node:http. It reads the body (64 KiB at most), checks the four auth
 * headers, verifies the HMAC-SHA256 over timestamp\nnonce\npath\nbody with the
 * key's secret in constant time, parses the body as a JSON object, and answers
 * 202 with a small JSON body. No database, no framework, no ledger.
 *
 * Started by submit-bench.ts as a child process with BASELINE_CREDENTIALS, a
 * JSON array of {"apiKey", "appSecret"}; PORT (default 0: any free port).
 * Once listening it prints "BASELINE_LISTENING <port>" on stdout.
 */
import http from 'node:http';
import { checkSignature, listen, parseObject, readBody, refuse, reply, requiredEnv } from './signed-http';

const secrets = new Map((JSON.parse(requiredEnv('BASELINE_CREDENTIALS')) as Array<{ apiKey: string; appSecret: string }>).map((c) => [c.apiKey, c.appSecret]));

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  if (request.method !== 'POST') return refuse(response, 405, 'METHOD_NOT_ALLOWED');
  const raw = await readBody(request);
  if (raw === undefined) return refuse(response, 413, 'PAYLOAD_TOO_LARGE');
  const signed = await checkSignature(request, raw, (apiKey) => secrets.get(apiKey));
  if ('status' in signed) return refuse(response, signed.status, signed.code);
  const body = parseObject(raw);
  if (body === undefined) return refuse(response, 400, 'INVALID_JSON');
  const outTradeNo = typeof body.out_trade_no === 'string' ? body.out_trade_no : null;
  reply(response, 202, { success: true, code: 'ACCEPTED', data: { out_trade_no: outTradeNo, status: 'processing' } });
}

const server = http.createServer((request, response) => {
  handle(request, response).catch(() => refuse(response, 500, 'INTERNAL_ERROR'));
});
listen(server, 'BASELINE');

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
