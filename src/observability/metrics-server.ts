import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { failureEnvelope } from '../infrastructure/http/api-error';
import { SecurityHeaders } from '../infrastructure/http/security-headers';
import { MetricsEndpoint } from './metrics-endpoint';

/** The separate listener of METRICS_PORT: GET /metrics and nothing else, with the API port's security headers. */
export async function startMetricsServer(endpoint: MetricsEndpoint, host: string, port: number, securityHeaders: SecurityHeaders): Promise<Server> {
  const server = createServer((request, response) => {
    securityHeaders.apply(request, response);
    const path = (request.url ?? '').split('?')[0];
    const answer = (status: number, headers: Record<string, string>, body: string) => response.writeHead(status, headers).end(body);
    if (path !== '/metrics') {
      answer(404, { 'Content-Type': 'application/json; charset=utf-8' }, JSON.stringify(failureEnvelope('NOT_FOUND', 'Only /metrics is served here')));
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const body = JSON.stringify(failureEnvelope('METHOD_NOT_ALLOWED', 'Only GET is allowed'));
      answer(405, { 'Content-Type': 'application/json; charset=utf-8', Allow: 'GET' }, body);
      return;
    }
    endpoint.reply(request.headers.authorization).then(
      (reply) => answer(reply.status, reply.headers, reply.body),
      () => answer(500, { 'Content-Type': 'application/json; charset=utf-8' }, JSON.stringify(failureEnvelope('INTERNAL_ERROR', 'Scrape failed'))),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function addressOf(server: Server): AddressInfo {
  return server.address() as AddressInfo;
}
