import { Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { ProjectionRunner } from '../../projections/projection-runner';
import { instanceId } from '../infrastructure/jobs/instance-id';
import { IDLE_POLL_MS } from '../infrastructure/jobs/job-dispatcher';
import { AppConfig } from '../config/config';
import { EVENT_STORE, EventStore } from '../ledger/ports/event-store.port';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { LedgerModule } from '../ledger/ledger.module';
import { SkuRoutes } from '../merchant-directory';
import { PostgresSimulatorStore } from './simulator/simulator-store';
import { startUpstreamSimulator, UpstreamSimulator } from './simulator/upstream-simulator';
import { HttpUpstream } from './upstream/http-upstream';
import { UPSTREAM, UpstreamProvider } from './upstream/upstream.port';
import { FulfilmentWorker, leaseFor } from './worker/fulfilment-worker';
import { logFailure } from '../infrastructure/logging/log-failure';
import { METRICS, Metrics } from '../infrastructure/metrics/metrics';

const SIMULATOR = Symbol('UpstreamSimulator');

/**
 * Starts the worker after start-up, woken when the projections add a job;
 * stops it (and the simulator) first on shutdown, and closes the upstream's
 * connections once everything that asks the upstream (the re-query worker
 * too) has stopped.
 */
@Injectable()
class FulfilmentLifecycle implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown {
  constructor(
    private readonly projections: ProjectionRunner,
    private readonly worker: FulfilmentWorker,
    @Inject(SIMULATOR) private readonly simulator: UpstreamSimulator | undefined,
    @Inject(UPSTREAM) private readonly upstream: UpstreamProvider,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.projections.onApplied(({ types }) => {
      if (types.has('OrderAccepted')) this.worker.nudge();
    });
    this.worker.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker.stop();
    await this.simulator?.stop();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.upstream.close?.();
  }
}

/** Fulfilment: accepted orders go to the upstream; outcomes settle, release or await reconciliation. */
@Module({
  imports: [LedgerModule],
  providers: [
    {
      provide: SIMULATOR,
      inject: [APP_CONFIG, PG_POOL],
      useFactory: async (config: AppConfig, pool: Pool) => {
        if (!config.upstreamSimulator) return undefined;
        // Its orders in the service's database: after a restart a re-query still answers what it answered before.
        const store = new PostgresSimulatorStore(pool);
        const simulator = await startUpstreamSimulator({
          deliveryDelayMs: config.upstreamSimDelayMs,
          failureDelayMs: config.upstreamSimFailureDelayMs,
          store,
        });
        new Logger('Fulfilment').log(`no UPSTREAM_URL: built-in upstream simulator at ${simulator.url}`);
        return simulator;
      },
    },
    {
      provide: UPSTREAM,
      inject: [APP_CONFIG, SIMULATOR],
      useFactory: (config: AppConfig, simulator?: UpstreamSimulator): UpstreamProvider =>
        new HttpUpstream(config.upstreamUrl ?? simulator!.url, {
          timeoutMs: config.upstreamTimeoutMs,
          connectTimeoutMs: config.upstreamConnectTimeoutMs,
        }),
    },
    {
      provide: FulfilmentWorker,
      inject: [PG_POOL, EVENT_STORE, CommandBus, UPSTREAM, SkuRoutes, APP_CONFIG, METRICS],
      useFactory: (
        pool: Pool,
        store: EventStore,
        commands: CommandBus,
        upstream: UpstreamProvider,
        skuRoutes: SkuRoutes,
        config: AppConfig,
        metrics: Metrics,
      ) => {
        const logger = new Logger('Fulfilment');
        metrics.fulfilmentSlots.set(config.fulfilmentConcurrency);
        return new FulfilmentWorker(
          pool,
          store,
          commands,
          upstream,
          skuRoutes,
          {
            concurrency: config.fulfilmentConcurrency,
            maxAttempts: config.fulfilmentMaxAttempts,
            retryBaseMs: config.fulfilmentRetryBaseMs,
            leaseMs: leaseFor(config.upstreamConnectTimeoutMs + config.upstreamTimeoutMs),
            pollMs: IDLE_POLL_MS,
            instanceId: instanceId(),
            onUpstreamOutcome: (outcome) => metrics.upstreamRequests.inc({ outcome }),
            slots: metrics.fulfilmentSlotTime,
          },
          (message, error) => (error ? logFailure(logger, message, error) : logger.warn(message)),
        );
      },
    },
    FulfilmentLifecycle,
  ],
  exports: [UPSTREAM, FulfilmentWorker],
})
export class FulfilmentModule {}
