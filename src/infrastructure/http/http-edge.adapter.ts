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
  /** Responses not yet finished, so that shutdown can make each the last on its connection. */
  private readonly unfinished = new Set<ServerResponse>();
  private closing = false;

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
      this.unfinished.add(response);
      response.once('close', () => this.unfinished.delete(response));
      if (this.closing) response.setHeader('Connection', 'close');
      app(request, response);
    });
    answerClientErrors(server, this.clientErrors);
    this.setHttpServer(server);
  }

  /**
   * Shutdown waits for the answers under way, but not for keep-alive
   * connections idling after them: Node's close() only closes the connections
   * idle at that moment, and the others would hold it for the keep-alive timeout.
   */
  override async close(): Promise<void> {
    this.closing = true;
    for (const response of this.unfinished) if (!response.headersSent) response.setHeader('Connection', 'close');
    const server = this.getHttpServer();
    const sweep = setInterval(() => server.closeIdleConnections(), 100);
    try {
      await super.close();
    } finally {
      clearInterval(sweep);
    }
    this.clientErrors.flush();
  }
}
