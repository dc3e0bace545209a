import { Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { callbackScheduleProjection } from '../../projections/callback-schedule.projection';
import { ProjectionRunner } from '../../projections/projection-runner';
import { projectionRunnerProvider } from '../../projections/projection-runner.provider';
import { instanceId } from '../infrastructure/jobs/instance-id';
import { AppConfig } from '../config/config';
import { EVENT_STORE, EventStore } from '../infrastructure/event-store/event-store.port';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { AppSecretCipher } from '../merchants/app-secret.cipher';
import { CallbackLog } from './callback-log';
import { CallbackWorker } from './callback-worker';
import { logFailure } from '../infrastructure/logging/log-failure';

const SCHEDULE_FEED = Symbol('CallbackScheduleFeed');

@Injectable()
class CallbackLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    @Inject(SCHEDULE_FEED) private readonly feed: ProjectionRunner,
    private readonly worker: CallbackWorker,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.feed.start();
    this.worker.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker.stop();
    await this.feed.stop();
  }
}

/** Merchant callbacks: a durable schedule fed from the event store, delivered by competing workers. */
@Module({
  providers: [
    projectionRunnerProvider(SCHEDULE_FEED, [callbackScheduleProjection], 'CallbackSchedule'),
    {
      provide: CallbackWorker,
      inject: [PG_POOL, EVENT_STORE, AppSecretCipher, APP_CONFIG],
      useFactory: (pool: Pool, store: EventStore, cipher: AppSecretCipher, config: AppConfig) => {
        const logger = new Logger('Callbacks');
        return new CallbackWorker(
          pool,
          store,
          cipher,
          {
            retryDelaysMs: config.callbackRetryDelaysMs,
            timeoutMs: config.callbackTimeoutMs,
            allowPrivateNetworks: config.callbackAllowPrivateNetworks,
            concurrency: config.callbackConcurrency,
            perMerchant: config.callbackConcurrencyPerMerchant,
            pollMs: 25,
            instanceId: instanceId(),
          },
          undefined,
          (message, error) => logFailure(logger, message, error),
          (message) => logger.warn(message),
        );
      },
    },
    { provide: CallbackLog, inject: [PG_POOL], useFactory: (pool: Pool) => new CallbackLog(pool) },
    CallbackLifecycle,
  ],
  exports: [CallbackLog],
})
export class CallbacksModule {}
