import { Logger } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { attachRequestContext, RequestContext, requestIdFrom } from '../logging/request-context';
import { Metrics } from '../metrics/metrics';

/** The route label of a request no route matched: raw paths would make one label per scanner's guess. */
export const UNMATCHED_ROUTE = '(unmatched)';
/** nginx's status for a request whose client went away before the reply. */
export const CLIENT_CLOSED_REQUEST = 499;

interface Series {
  count(): void;
  observe(seconds: number): void;
}

/**
 * Gives each request its id (the client's X-Request-Id if it is a safe one),
 * returns it on the reply, and when the reply is sent writes the request's
 * one access line and its HTTP metrics. The line names the route pattern,
 * status, duration and merchant; never a header or a body, so no signature,
 * secret or token.
 */
export class RequestLog {
  private readonly logger = new Logger('Access');
  /** The metric series of each method, route and status, looked up once: label hashing on every request adds up. */
  private readonly series = new Map<string, Series>();

  constructor(private readonly metrics?: Metrics) {}

  begin(request: IncomingMessage, response: ServerResponse): RequestContext {
    const context: RequestContext = { requestId: requestIdFrom(request.headers['x-request-id']), startedAt: process.hrtime.bigint() };
    attachRequestContext(request, context);
    response.setHeader('X-Request-Id', context.requestId);
    response.once('close', () => this.end(context, request, response));
    return context;
  }

  private end(context: RequestContext, request: IncomingMessage, response: ServerResponse): void {
    const seconds = Number(process.hrtime.bigint() - context.startedAt) / 1e9;
    // A route the service named itself first: a middleware mounted on a wildcard sets the router's route to that wildcard.
    const routed = (request as IncomingMessage & { route?: { path?: unknown } }).route?.path;
    const route = context.route ?? (typeof routed === 'string' ? routed : UNMATCHED_ROUTE);
    const status = response.writableFinished ? response.statusCode : CLIENT_CLOSED_REQUEST;
    const method = request.method ?? '';
    const series = this.seriesOf(method, route, status);
    series?.count();
    series?.observe(seconds);
    context.onReply?.(status, context.code);
    const path = (request.url ?? '').split('?', 1)[0];
    this.logger.log({
      message: `${method} ${path} ${status}`,
      request_id: context.requestId,
      method,
      route,
      path,
      status,
      code: context.code,
      duration_ms: Math.round(seconds * 10_000) / 10,
      merchant_id: context.merchantId,
    });
  }

  private seriesOf(method: string, route: string, status: number): Series | undefined {
    if (!this.metrics) return undefined;
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (!series) {
      const labels = { method, route, status };
      const counter = this.metrics.httpRequests.labels(labels);
      const histogram = this.metrics.httpDuration.labels(labels);
      series = { count: () => counter.inc(), observe: (s) => histogram.observe(s) };
      // Methods are the client's to choose: a flood of invented ones must not grow this map without end.
      if (this.series.size < 10_000) this.series.set(key, series);
    }
    return series;
  }
}
