import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { Pool } from 'pg';
import { from, lastValueFrom, Observable } from 'rxjs';
import { AppConfig } from '../../config/config';
import { APP_CONFIG, PG_POOL } from '../infrastructure.tokens';
import { isEventStoreUnavailable } from '../event-store/store-unavailable';
import { METRICS, Metrics } from '../metrics/metrics';
import { isDatabaseUnavailable, untilDatabaseAnswers } from '../postgres/database-wait';

/**
 * Carries a request's work through a database failover. Work whose
 * database connection dropped while it ran may have committed: when running
 * it twice has the effect of running it once, it waits for the database to
 * answer and runs again, within DATABASE_WAIT_MS of its first failure;
 * otherwise, or when the wait runs out, the failure goes on to the client.
 * Connections that could not be made at all are waited for by the pool
 * itself (WaitingPool).
 */
@Injectable()
export class DatabaseWait {
  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'databaseWaitMs'>,
    @Inject(PG_POOL) private readonly pool: Pick<Pool, 'query'>,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  /** `work` again after a lost database answer; `canRepeat` may still say no (an answer already under way). */
  async repeatAfterOutage<T>(work: () => Promise<T>, canRepeat: () => boolean = () => true): Promise<T> {
    const waitMs = this.config.databaseWaitMs;
    let giveUpAt: number | undefined;
    for (;;) {
      try {
        return await work();
      } catch (error) {
        // An EventStoreDB leader change is waited out the same way: the ledger's keys make the repeat harmless there too.
        if (waitMs === 0 || !(isDatabaseUnavailable(error) || isEventStoreUnavailable(error)) || !canRepeat()) throw error;
        giveUpAt ??= Date.now() + waitMs;
        const left = giveUpAt - Date.now();
        if (left <= 0) throw error;
        this.metrics.databaseWaits.inc({ kind: 'request' });
        // Run again once a statement goes through; the original failure if none does in time.
        await untilDatabaseAnswers(() => this.pool.query('select 1'), { waitMs: left }).catch(() => Promise.reject(error));
      }
    }
  }
}

const SAFE_TO_REPEAT = Symbol('safe to repeat');

/**
 * Marks a back-office route whose request, run twice, has the effect of
 * running it once: a deposit or an adjustment (its reference), a PUT.
 * Reads (GET, HEAD) need no mark.
 */
export const SafeToRepeat = () => SetMetadata(SAFE_TO_REPEAT, true);

/**
 * DatabaseWait around the back office's handlers: reads and routes marked
 * SafeToRepeat run again after a lost database answer. (The merchant API,
 * whose every route is safe to repeat, calls DatabaseWait itself: an
 * interceptor costs each request Nest's interceptor chain.)
 */
@Injectable()
export class DatabaseWaitInterceptor implements NestInterceptor {
  constructor(
    private readonly wait: DatabaseWait,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http' || !this.safeToRepeat(context)) return next.handle();
    const response = context.switchToHttp().getResponse<Response>();
    // An answer already under way (a streamed export) cannot be started again.
    return from(
      this.wait.repeatAfterOutage(
        () => lastValueFrom(next.handle(), { defaultValue: undefined }),
        () => !response.headersSent,
      ),
    );
  }

  private safeToRepeat(context: ExecutionContext): boolean {
    const { method } = context.switchToHttp().getRequest<Request>();
    if (method === 'GET' || method === 'HEAD') return true;
    return this.reflector.getAllAndOverride<boolean>(SAFE_TO_REPEAT, [context.getHandler(), context.getClass()]) === true;
  }
}
