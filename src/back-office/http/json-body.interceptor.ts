import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { ApiError } from '../../infrastructure/http/api-error';
import { readRawBody } from '../../infrastructure/http/raw-body';
import { invalidJson } from '../../infrastructure/http/request-errors';
import { parseStrictJson } from '../../infrastructure/http/strict-json';

export const MAX_BODY_BYTES = 64 * 1024;

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Parses the JSON body of back-office requests. It is an interceptor rather
 * than a middleware so that it runs after the staff guard: a caller without a
 * valid token learns nothing about its body, and its bytes are never parsed.
 * The Content-Type is not consulted, and a key twice in one object is
 * refused, as on the merchant API.
 */
@Injectable()
export class JsonBodyInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    if (!METHODS_WITH_BODY.has(request.method)) return next.handle();
    return from(readJsonBody(request)).pipe(
      switchMap((body) => {
        request.body = body;
        return next.handle();
      }),
    );
  }
}

/** The parsed body, or undefined for an empty one (which a handler needing an object refuses). */
async function readJsonBody(request: Request): Promise<unknown> {
  const raw = await readRawBody(request, MAX_BODY_BYTES).catch((error: unknown) => {
    // The rest of the body is unread (or the stream already torn down), so the
    // connection cannot carry another request: tell the client not to reuse it.
    if (error instanceof ApiError && error.status === 413) {
      throw new ApiError(413, error.code, error.message, undefined, { ...error.headers, Connection: 'close' });
    }
    throw error;
  });
  if (raw.length === 0) return undefined;
  const parsed = parseStrictJson(raw);
  if (!parsed.ok) throw invalidJson(parsed.reason);
  return parsed.value;
}
