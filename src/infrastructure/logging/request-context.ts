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
 * The context travels on the request object, not in an AsyncLocalStorage:
 * on Node 20 an AsyncLocalStorage hooks every promise of the process, and
 * costs the submit path more than everything else logging does. Code that
 * logs while serving a request has the request at hand and passes its id.
 */
const CONTEXT = Symbol('requestContext');

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
