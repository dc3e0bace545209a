import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What the service knows about the request it is serving, for its log lines and metrics. */
export interface RequestContext {
  readonly requestId: string;
  /** process.hrtime.bigint() when the request arrived. */
  readonly startedAt: bigint;
  /** The route pattern, when the service names it before routing does (the merchant gateway answers before routing). */
  route?: string;
  merchantId?: string;
  /** The failure envelope's code, when the reply is one. */
  code?: string;
  /** Called once the reply is sent (or the client has gone: status 499), e.g. to count a submit's outcome. */
  onReply?: (status: number, code: string | undefined) => void;
}

/*
 * The context travels on the request object, for the code that has the
 * request at hand (the gateway names the merchant, the exception filter the
 * code), and in an AsyncLocalStorage for everything called or awaited while
 * serving it: every line logged meanwhile, by whatever code, carries its
 * request_id. A stream's or emitter's events run in the context of whoever
 * made the stream, so the code that logs from them passes requestFields().
 * The scope's price depends on Node: up to Node 22 an AsyncLocalStorage
 * hooks every promise of the process; from Node 24 (the production image's)
 * it rides on V8's async context and costs next to nothing
 * (docs/operations.md#logs has the figures).
 */
const CONTEXT = Symbol('requestContext');
const scope = new AsyncLocalStorage<RequestContext | undefined>();

/** Runs `serve` (and everything it calls or awaits) as the work of the request `context` belongs to. */
export function serveInRequestScope<A extends unknown[]>(context: RequestContext, serve: (...args: A) => void, ...args: A): void {
  scope.run(context, serve, ...args);
}

/** The request whose work is running now, if any. */
export function currentRequest(): RequestContext | undefined {
  return scope.getStore();
}

export function attachRequestContext(request: object, context: RequestContext): void {
  (request as Record<symbol, RequestContext>)[CONTEXT] = context;
}

export function requestContextOf(request: object | undefined): RequestContext | undefined {
  return request ? (request as Record<symbol, RequestContext | undefined>)[CONTEXT] : undefined;
}

/** The fields that tie a log line to the request it was written for. */
export function requestFields(request: object | undefined): { request_id?: string } {
  const context = requestContextOf(request);
  return context ? { request_id: context.requestId } : {};
}

/** Visible ASCII only, bounded: an id that goes into log lines and a reply header must not carry line breaks or a payload. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The client's X-Request-Id when it is a safe one, else a new UUID. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && CLIENT_REQUEST_ID.test(header) ? header : randomUUID();
}
