import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { ApiError } from '../../infrastructure/http/api-error';

/**
 * The back office's one reading of query strings. A route names the
 * parameters it takes and how each is read (`@QueryString(SPEC) q:
 * QueryValues<typeof SPEC>`); a route that names none takes none. The query
 * string is decoded here from the request line, not taken from Express's
 * parser, so that every route refuses the same things the same way, with 422
 * VALIDATION_FAILED naming the parameter: one the route does not take
 * (`limit[]` and `limit[x]` are not `limit`), one given twice, an empty one,
 * one whose percent-encoding is not UTF-8, one with a control character, and
 * a value its reader refuses (out of range, wrong format).
 */

/** Reads one parameter's text, or throws the 422 that says what is wrong with it. */
export type QueryReader<T> = (raw: string, name: string) => T;
export type QuerySpec = Readonly<Record<string, QueryReader<unknown>>>;
/** What a route's handler gets: each parameter read, undefined when it was left out. */
export type QueryValues<S extends QuerySpec> = { readonly [K in keyof S]?: ReturnType<S[K]> };

/** No parameter of the back office is longer (a cursor is at most about 700 characters). */
export const MAX_QUERY_VALUE_LENGTH = 1024;

const QUERY_SPEC = 'backOffice:querySpec';
const QUERY_VALUES = Symbol('backOffice:queryValues');

export const invalidParameter = (field: string, message: string) => new ApiError(422, 'VALIDATION_FAILED', message, field);

/** A name as it may be quoted back: a hostile one can be of any length. */
const quoted = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}…` : name);

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The query string as name and value pairs, in order, each checked as text; `?`, `&&` and a trailing `&` hold none. */
function pairs(search: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const piece of search.split('&')) {
    if (piece === '') continue;
    const equals = piece.indexOf('=');
    const rawName = equals < 0 ? piece : piece.slice(0, equals);
    const name = decoded(rawName);
    if (name === undefined) throw invalidParameter(quoted(rawName), `The query parameter name ${quoted(rawName)} is not percent-encoded UTF-8`);
    const value = decoded(equals < 0 ? '' : piece.slice(equals + 1));
    if (value === undefined) throw invalidParameter(quoted(name), `${quoted(name)} is not percent-encoded UTF-8`);
    out.push([name, value]);
  }
  return out;
}

/** Checks the query string `search` (without its `?`) against a route's parameters and reads them. */
export function readQueryString<S extends QuerySpec>(search: string, spec: S): QueryValues<S> {
  const taken = Object.keys(spec);
  const given = new Map<string, string>();
  for (const [name, value] of pairs(search)) {
    if (!Object.hasOwn(spec, name)) {
      const base = /^([^[\]]+)\[[^\]]*\](.*)$/.exec(name)?.[1];
      if (base !== undefined && Object.hasOwn(spec, base)) {
        throw invalidParameter(base, `${base} is given as ${quoted(name)}: a query parameter is one value, never an array or an object`);
      }
      const takes = taken.length === 0 ? 'takes no query parameters' : `takes ${taken.join(', ')}`;
      throw invalidParameter(quoted(name), `Unknown query parameter ${quoted(name)}; this route ${takes}`);
    }
    if (given.has(name)) throw invalidParameter(name, `${name} may be given once`);
    if (value === '') throw invalidParameter(name, `${name} is empty: give it a value, or leave it out`);
    if (value.length > MAX_QUERY_VALUE_LENGTH) throw invalidParameter(name, `${name} must be at most ${MAX_QUERY_VALUE_LENGTH} characters`);
    // Spaces pass (a + pasted unencoded into an offset arrives as one); no parameter holds a control character.
    if (/\p{Cc}/u.test(value)) throw invalidParameter(name, `${name} must not contain control characters (a NUL, a line break, ...)`);
    given.set(name, value);
  }
  const values: Record<string, unknown> = {};
  for (const [name, read] of Object.entries(spec)) {
    const raw = given.get(name);
    if (raw !== undefined) values[name] = read(raw, name);
  }
  return values as QueryValues<S>;
}

const QueryValuesOf = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => context.switchToHttp().getRequest<Record<symbol, unknown>>()[QUERY_VALUES],
);

/**
 * The route's query parameters, read by QueryStringInterceptor (so before its
 * path ids and body are checked): the spec is kept on the handler for it.
 */
export function QueryString(spec: QuerySpec): ParameterDecorator {
  return (target, key, index) => {
    Reflect.defineMetadata(QUERY_SPEC, spec, (target as Record<string | symbol, object>)[key!]);
    QueryValuesOf()(target, key, index);
  };
}

/** Reads every back-office route's query string, the routes without @QueryString included (they take none). */
@Injectable()
export class QueryStringInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request & Record<symbol, unknown>>();
    const spec = this.reflector.get<QuerySpec | undefined>(QUERY_SPEC, context.getHandler()) ?? {};
    const url = request.originalUrl ?? request.url;
    const mark = url.indexOf('?');
    request[QUERY_VALUES] = readQueryString(mark < 0 ? '' : url.slice(mark + 1), spec);
    return next.handle();
  }
}
