import { Injectable, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { ProjectionRunner } from '../../projections/projection-runner';
import { instanceId } from '../infrastructure/jobs/instance-id';
import { IDLE_POLL_MS } from '../infrastructure/jobs/job-dispatcher';
import { AppConfig } from '../config/config';
import { EVENT_STORE, EventStore } from '../ledger/ports/event-store.port';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { CallbackRecipients } from '../merchant-directory';
import { CallbackLog } from './callback-log';
import { CallbackWorker } from './callback-worker';
import { callbackConnections } from './delivery/callback-connections';
import { logFailure } from '../infrastructure/logging/log-failure';
import { METRICS, Metrics } from '../infrastructure/metrics/metrics';

/** Starts the worker after start-up, woken when the projections schedule a callback; stops it first on shutdown. */
@Injectable()
class CallbackLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly worker: CallbackWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.projections.onApplied(({ types }) => {
      if (types.has('OrderSucceeded') || types.has('OrderFailed')) this.worker.nudge();
    });
    this.worker.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker.stop();
    callbackConnections.close();
  }
}

/** Merchant callbacks: a durable schedule fed from the event store, delivered by competing workers. */
@Module({
  providers: [
    {
      provide: CallbackWorker,
      inject: [PG_POOL, EVENT_STORE, CallbackRecipients, APP_CONFIG, METRICS],
      useFactory: (pool: Pool, store: EventStore, recipients: CallbackRecipients, config: AppConfig, metrics: Metrics) => {
        const logger = new Logger('Callbacks');
        return new CallbackWorker(
          pool,
          store,
          recipients,
          {
            retryDelaysMs: config.callbackRetryDelaysMs,
            timeoutMs: config.callbackTimeoutMs,
            allowPrivateNetworks: config.callbackAllowPrivateNetworks,
            concurrency: config.callbackConcurrency,
            perMerchant: config.callbackConcurrencyPerMerchant,
            pollMs: IDLE_POLL_MS,
            instanceId: instanceId(),
            onAttempt: (outcome) => metrics.callbackAttempts.inc({ outcome }),
          },
          undefined,
          (message, error) => logFailure(logger, message, error),
          (message) => logger.warn(message),
        );
      },
    },
    {
      provide: CallbackLog,
      inject: [PG_POOL, CallbackWorker],
      useFactory: (pool: Pool, worker: CallbackWorker) => new CallbackLog(pool, () => worker.nudge()),
    },
    CallbackLifecycle,
  ],
  exports: [CallbackLog],
})
export class CallbacksModule {}
