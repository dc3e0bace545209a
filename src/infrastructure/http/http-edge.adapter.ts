import { ExpressAdapter } from '@nestjs/platform-express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AppConfig } from '../../config/config';
import { ClientErrorLog } from './client-error-log';
import { answerClientErrors, refuse } from './client-errors';

/**
 * Nest's Express adapter with the HTTP server built here, so that every
 * reply, even to bytes that never became a request, is the contract's
 * envelope.
 */
export class HttpEdgeAdapter extends ExpressAdapter {
  private readonly clientErrors = new ClientErrorLog();

  constructor(private readonly timeouts: Pick<AppConfig, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs'>) {
    super();
  }

  override initHttpServer(): void {
    const app = this.getInstance<(request: IncomingMessage, response: ServerResponse) => void>();
    const { httpHeadersTimeoutMs, httpRequestTimeoutMs, httpKeepAliveTimeoutMs } = this.timeouts;
    const options = {
      headersTimeout: httpHeadersTimeoutMs,
      requestTimeout: httpRequestTimeoutMs,
      keepAliveTimeout: httpKeepAliveTimeoutMs,
      // Late requests are only noticed when Node looks for them (every 30 s by
      // default): often enough that a timeout fires at most a quarter late.
      connectionsCheckingInterval: Math.min(1000, Math.max(25, Math.floor(Math.min(httpHeadersTimeoutMs, httpRequestTimeoutMs) / 4))),
      // Node's own Host check answers an empty 400; the same rule is kept below, with a body.
      requireHostHeader: false,
    };
    const server = createServer(options, (request, response) => {
      if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && request.headers.host === undefined) {
        this.clientErrors.record('malformed');
        refuse(response, { status: 400, code: 'MALFORMED_HTTP', message: 'An HTTP/1.1 request needs a Host header', field: 'Host' });
        return;
      }
      app(request, response);
    });
    answerClientErrors(server, this.clientErrors);
    this.setHttpServer(server);
  }

  override async close(): Promise<void> {
    await super.close();
    this.clientErrors.flush();
  }
}
