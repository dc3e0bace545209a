import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { AppConfig } from '../../config/config';
import { APP_CONFIG } from '../infrastructure.tokens';
import { isEventStoreUnavailable } from '../event-store/store-unavailable';
import { METRICS, Metrics } from '../metrics/metrics';
import { isDatabaseUnavailable, untilDatabaseAnswers } from '../postgres/database-wait';

/**
 * Carries a request's work through a database failover. Work whose
 * database connection dropped while it ran may have committed: when running
 * it twice has the effect of running it once, it runs again, backing off,
 * within DATABASE_WAIT_MS of its first failure (its connections meanwhile
 * wait in the pool, WaitingPool, for the database to answer); otherwise, or
 * when the wait runs out, the failure goes on to the client.
 */
@Injectable()
export class DatabaseWait {
  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'databaseWaitMs'>,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  /** `work` again after a lost database answer; `canRepeat` may still say no (an answer already under way). */
  repeatAfterOutage<T>(work: () => Promise<T>, canRepeat: () => boolean = () => true): Promise<T> {
    return untilDatabaseAnswers(work, {
      waitMs: this.config.databaseWaitMs,
      // An EventStoreDB leader change is waited out the same way: the ledger's keys make the repeat harmless there too.
      isOutage: (error) => (isDatabaseUnavailable(error) || isEventStoreUnavailable(error)) && canRepeat(),
      onWait: () => this.metrics.databaseWaits.inc({ kind: 'request' }),
    });
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
