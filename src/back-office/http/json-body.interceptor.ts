import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { from, Observable, switchMap } from 'rxjs';
import { readRawBody } from '../../infrastructure/http/raw-body';
import { parseStrictJson } from '../../infrastructure/http/strict-json';
import { MAX_BODY_BYTES } from '../../shared/limits';

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

/** The parsed body, or undefined for no body at all (which a handler needing an object refuses). */
async function readJsonBody(request: Request): Promise<unknown> {
  // A body over the limit is refused with Connection: close, as the rest of it is left unread.
  const raw = await readRawBody(request, MAX_BODY_BYTES);
  return raw.length === 0 ? undefined : parseStrictJson(raw);
}
