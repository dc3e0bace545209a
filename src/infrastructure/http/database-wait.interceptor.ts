import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Pool } from 'pg';
import { from, Observable, retry, throwError } from 'rxjs';
import { APP_CONFIG, PG_POOL } from '../infrastructure.tokens';
import { AppConfig } from '../../config/config';
import { METRICS, Metrics } from '../metrics/metrics';
import { isDatabaseUnavailable, untilDatabaseAnswers } from '../postgres/database-wait';

const SAFE_TO_REPEAT = Symbol('safe to repeat');

/**
 * Marks a route (or a controller's every route) whose request, run twice,
 * has the effect of running it once: a merchant's submit (its out_trade_no),
 * a deposit or an adjustment (its reference), a PUT. Reads (GET, HEAD) need
 * no mark.
 */
export const SafeToRepeat = () => SetMetadata(SAFE_TO_REPEAT, true);

/**
 * Carries requests through a database failover. A request whose database
 * connection dropped while it ran may have committed: when running it again
 * is safe (a read, or a route marked SafeToRepeat), it waits for the
 * database to answer and runs again, within DATABASE_WAIT_MS of its first
 * failure; otherwise, or when the wait runs out, the failure goes on to the
 * client. Connections that could not be made at all are waited for by the
 * pool itself (WaitingPool).
 */
@Injectable()
export class DatabaseWaitInterceptor implements NestInterceptor {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(METRICS) private readonly metrics: Metrics,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const waitMs = this.config.databaseWaitMs;
    if (context.getType() !== 'http' || waitMs === 0 || !this.safeToRepeat(context)) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    let giveUpAt: number | undefined;
    return next.handle().pipe(
      retry({
        delay: (error: unknown) => {
          // An answer already under way (a streamed export) cannot be started again.
          if (!isDatabaseUnavailable(error) || response.headersSent) return throwError(() => error);
          giveUpAt ??= Date.now() + waitMs;
          const left = giveUpAt - Date.now();
          if (left <= 0) return throwError(() => error);
          this.metrics.databaseWaits.inc({ kind: 'request' });
          // Run again once a statement goes through; the original failure if none does in time.
          return from(untilDatabaseAnswers(() => this.pool.query('select 1'), { waitMs: left }).catch(() => Promise.reject(error)));
        },
      }),
    );
  }

  private safeToRepeat(context: ExecutionContext): boolean {
    const { method } = context.switchToHttp().getRequest<Request>();
    if (method === 'GET' || method === 'HEAD') return true;
    return this.reflector.getAllAndOverride<boolean>(SAFE_TO_REPEAT, [context.getHandler(), context.getClass()]) === true;
  }
}
