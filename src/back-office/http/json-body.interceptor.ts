import { CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { readRawBody } from '../../infrastructure/http/raw-body';
import { parseStrictJson } from '../../infrastructure/http/strict-json';
import { MAX_BODY_BYTES } from '../../shared/limits';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RAW_BODY_LIMIT = 'backOffice:rawBodyLimit';
const JSON_BODY_LIMIT = 'backOffice:jsonBodyLimit';

/**
 * A route that takes a file rather than JSON (an upstream report): its body
 * is the bytes as received, a Buffer of at most `maxBytes`, read after the
 * staff guard like every other body.
 */
export const RawBody = (maxBytes: number) => SetMetadata(RAW_BODY_LIMIT, maxBytes);

/**
 * A route whose JSON body may be longer than MAX_BODY_BYTES: a bulk action
 * that lists up to 10,000 orders by number. Every other route, and the
 * merchant API, keeps the 64 KiB limit.
 */
export const JsonBodyLimit = (maxBytes: number) => SetMetadata(JSON_BODY_LIMIT, maxBytes);

/**
 * Parses the JSON body of back-office requests. It is an interceptor rather
 * than a middleware so that it runs after the staff guard: a caller without a
 * valid token learns nothing about its body, and its bytes are never parsed.
 * The Content-Type is not consulted, and a key twice in one object is
 * refused, as on the merchant API. A route marked @RawBody gets the bytes instead.
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    if (!METHODS_WITH_BODY.has(request.method)) return next.handle();
    const rawLimit = this.reflector.get<number | undefined>(RAW_BODY_LIMIT, context.getHandler());
    const jsonLimit = this.reflector.get<number | undefined>(JSON_BODY_LIMIT, context.getHandler()) ?? MAX_BODY_BYTES;
    return from(rawLimit === undefined ? readJsonBody(request, jsonLimit) : readRawBody(request, rawLimit)).pipe(
      switchMap((body) => {
        request.body = body;
        return next.handle();
      }),
    );
  }
}

/** The parsed body, or undefined for no body at all (which a handler needing an object refuses). */
async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  // A body over the limit is refused with Connection: close, as the rest of it is left unread.
  const raw = await readRawBody(request, limit);
  return raw.length === 0 ? undefined : parseStrictJson(raw);
}
