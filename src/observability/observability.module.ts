import { Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { Server } from 'node:http';
import { Pool } from 'pg';
import { AppConfig } from '../config/config';
import { HealthController } from './health/health.controller';
import { Readiness } from './health/readiness';
import { EVENT_STORE, EventStore } from '../ledger/ports/event-store.port';
import { APP_CONFIG, MIGRATIONS, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { Migration } from '../infrastructure/postgres/migrations';
import { withoutWaiting } from '../infrastructure/postgres/database-wait';
import { METRICS, Metrics } from '../infrastructure/metrics/metrics';
import { SecurityHeaders } from '../infrastructure/http/security-headers';
import { ProjectionRunner } from '../../projections/projection-runner';
import { listeningAddress } from './listening-address';
import { MetricsController } from './metrics.controller';
import { MetricsEndpoint } from './metrics-endpoint';
import { startMetricsServer } from './metrics-server';
import { registerScrapeReadings } from './scrape-readings';
import { LedgerModule } from '../ledger/ledger.module';
import { WalletWarmup } from '../ledger/wallet/wallet-warmup';
import { MerchantApiModule } from '../merchant-api/merchant-api.module';
import { IntakeGuard } from '../merchant-api';
import { warnOfRiskySettings } from './database-settings';
import { InstanceHeartbeat } from './instances/instance-heartbeat';

/** Starts the METRICS_PORT listener with the service, and closes it with the service. */
@Injectable()
class MetricsListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly endpoint: MetricsEndpoint,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const logger = new Logger('Metrics');
    if (this.config.metricsPort !== undefined) {
      this.server = await startMetricsServer(this.endpoint, this.config.host, this.config.metricsPort, new SecurityHeaders(this.config.trustProxy));
      logger.log(`metrics on ${listeningAddress(this.server)}/metrics${this.config.metricsToken ? ' (bearer token required)' : ''}`);
    } else if (!this.endpoint.onApiPort) {
      logger.log('metrics are not served: in production set METRICS_TOKEN or METRICS_PORT to serve /metrics');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** Warns once at start-up of Postgres settings that break a promise of the service (database-settings.ts). */
@Injectable()
class DatabaseSettingsCheck implements OnApplicationBootstrap {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async onApplicationBootstrap(): Promise<void> {
    await warnOfRiskySettings(this.pool);
  }
}

/** Health probes, Prometheus metrics and the readings behind them. */
@Module({
  imports: [LedgerModule, MerchantApiModule],
  controllers: [HealthController, MetricsController],
  providers: [
    {
      provide: MetricsEndpoint,
      inject: [METRICS, APP_CONFIG, PG_POOL, EVENT_STORE, ProjectionRunner, IntakeGuard],
      useFactory: (metrics: Metrics, config: AppConfig, pool: Pool, store: EventStore, projections: ProjectionRunner, intake: IntakeGuard) => {
        registerScrapeReadings(
          metrics,
          // A scrape during an outage counts a scrape error at once rather than waiting past its timeout.
          withoutWaiting(pool),
          store,
          projections.projections.map((p) => p.name),
          intake,
        );
        return new MetricsEndpoint(metrics, config);
      },
    },
    {
      provide: Readiness,
      inject: [PG_POOL, EVENT_STORE, APP_CONFIG, MIGRATIONS, ProjectionRunner, WalletWarmup, IntakeGuard],
      useFactory: (
        pool: Pool,
        store: EventStore,
        config: AppConfig,
        migrations: readonly Migration[],
        projections: ProjectionRunner,
        warmup: WalletWarmup,
        intake: IntakeGuard,
      ) =>
        new Readiness(
          // A probe reports an outage; it does not sit it out (DATABASE_WAIT_MS).
          withoutWaiting(pool),
          store,
          migrations,
          projections.projections.map((p) => p.name),
          config.readyMaxLagMs,
          warmup,
          intake,
        ),
    },
    MetricsListener,
    DatabaseSettingsCheck,
    InstanceHeartbeat,
  ],
})
export class ObservabilityModule {}
