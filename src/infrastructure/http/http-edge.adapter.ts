import { ExpressAdapter } from '@nestjs/platform-express';
import type { Response } from 'express';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { AppConfig } from '../../config/config';
import { Logger } from '@nestjs/common';
import { Metrics } from '../metrics/metrics';
import { ClientErrorLog } from './client-error-log';
import { answerClientErrors, refuse } from './client-errors';
import { ExpressPrototypes, messagesOnExpressPrototypes } from './express-messages';
import { sendJson } from './json-reply';
import { serveInRequestScope } from '../logging/request-context';
import { RequestLog } from './request-log';
import { SecurityHeaders } from './security-headers';

/**
 * Answers still under way this long after shutdown began have their
 * connections cut: an answer takes milliseconds, a whole statement export
 * seconds, and only a client that stopped reading is still being answered
 * by then (it would hold the shutdown for good). Below the 30 s an
 * orchestrator commonly allows before it kills the process.
 */
export const SHUTDOWN_ANSWERS_GRACE_MS = 10_000;

/**
 * Nest's Express adapter with the HTTP server built here, so that every
 * reply, even to bytes that never became a request, is the contract's
 * envelope and carries the security headers.
 */
export class HttpEdgeAdapter extends ExpressAdapter {
  private readonly clientErrors: ClientErrorLog;
  private readonly requests: RequestLog;
  private readonly securityHeaders: SecurityHeaders;
  /** Responses not yet finished, so that shutdown can make each the last on its connection. */
  private readonly unfinished = new Set<ServerResponse>();
  /** Open connections, so that shutdown can close those that never sent a byte (Node's idle sweep leaves them). */
  private readonly connections = new Set<Socket>();
  private closing = false;

  constructor(
    private readonly timeouts: Pick<AppConfig, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs' | 'trustProxy'>,
    metrics?: Metrics,
    /** How long shutdown waits for the answers under way before it cuts their connections. */
    private readonly answersGraceMs = SHUTDOWN_ANSWERS_GRACE_MS,
  ) {
    super();
    this.clientErrors = new ClientErrorLog(undefined, undefined, undefined, metrics);
    this.requests = new RequestLog(metrics);
    this.securityHeaders = new SecurityHeaders(timeouts.trustProxy);
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
    const server = createServer({ ...options, ...messagesOnExpressPrototypes(this.getInstance<ExpressPrototypes>()) }, (request, response) => {
      const context = this.requests.begin(request, response);
      // First, so that every reply carries them, whoever writes it and whatever its status.
      this.securityHeaders.apply(request, response);
      if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && request.headers.host === undefined) {
        this.clientErrors.record('malformed');
        context.code = 'MALFORMED_HTTP';
        refuse(response, { status: 400, code: 'MALFORMED_HTTP', message: 'An HTTP/1.1 request needs a Host header', field: 'Host' });
        return;
      }
      this.unfinished.add(response);
      response.once('close', () => this.unfinished.delete(response));
      if (this.closing) response.setHeader('Connection', 'close');
      serveInRequestScope(context, app, request, response);
    });
    server.on('connection', (socket: Socket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
    answerClientErrors(server, this.clientErrors, this.securityHeaders.rawLines);
    this.setHttpServer(server);
  }

  /**
   * A JSON reply to anything but GET or HEAD skips Express's res.json (see
   * sendJson): a POST is never a conditional request. GETs, streams and
   * replies with a type of their own go the usual way.
   */
  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    const method = response.req.method;
    if (method === 'GET' || method === 'HEAD' || !isPlainJson(body) || response.getHeader('Content-Type') !== undefined) {
      return super.reply(response, body, statusCode);
    }
    sendJson(response, statusCode, body);
    return response;
  }

  /**
   * Shutdown waits for the answers under way, but not for keep-alive
   * connections idling after them: Node's close() only closes the connections
   * idle at that moment, and the others would hold it for the keep-alive timeout.
   * Nor for connections that never sent a byte (opened ahead of need by a
   * browser or a client's pool, or a bare TCP check): Node counts none of them
   * idle, and one that stays silent would hold the shutdown for good. Nor, past
   * SHUTDOWN_ANSWERS_GRACE_MS, for an answer its client stopped reading.
   */
  override async close(): Promise<void> {
    this.closing = true;
    const logger = new Logger('Http');
    logger.log(`stopped accepting connections; waiting for ${this.unfinished.size} requests in flight`);
    for (const response of this.unfinished) if (!response.headersSent) response.setHeader('Connection', 'close');
    const server = this.getHttpServer();
    const closeUnused = () => {
      for (const socket of this.connections) if (socket.bytesRead === 0) socket.destroy();
    };
    closeUnused();
    const sweep = setInterval(() => {
      server.closeIdleConnections();
      closeUnused();
    }, 100);
    const cutOff = setTimeout(() => {
      logger.warn(`${this.unfinished.size} answers still under way after ${this.answersGraceMs} ms: cutting their connections`);
      // Idle and unused connections are gone by now: what is left carries those answers.
      server.closeAllConnections();
    }, this.answersGraceMs);
    try {
      await super.close();
    } finally {
      clearInterval(sweep);
      clearTimeout(cutOff);
    }
    this.clientErrors.flush();
  }
}

/** An object literal or an array: what res.json would serialise as it stands. */
function isPlainJson(body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false;
  const prototype = Object.getPrototypeOf(body) as unknown;
  return prototype === Object.prototype || prototype === null || Array.isArray(body);
}
