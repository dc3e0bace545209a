import { Injectable, DynamicModule, Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/config';
import { createEventStore } from './event-store/create-event-store';
import { EVENT_STORE, EventStore } from '../ledger/ports/event-store.port';
import { LEDGER_OBSERVER, LEDGER_SETTINGS, LedgerSettings } from '../ledger/ports/ledger-settings.port';
import { APP_CONFIG, MIGRATIONS, PG_POOL } from './infrastructure.tokens';
import { DatabaseWait, DatabaseWaitInterceptor } from './http/database-wait.interceptor';
import { createPool } from './postgres/connection';
import { migrate, Migration } from './postgres/migrations';
import { MeteredEventStore } from './metrics/metered-event-store';
import { ledgerObserver } from './metrics/ledger-observer';
import { METRICS, Metrics } from './metrics/metrics';

/** Closes the event store before the pool it may use, after everything else has stopped. */
@Injectable()
class InfrastructureShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
    await this.pool.end();
    new Logger('Infrastructure').log('closed the event store and the database connections: stopped');
  }
}

/** What the application hands down: infrastructure knows no capability, so it is told every table to create. */
export interface InfrastructureOptions {
  config: AppConfig;
  metrics: Metrics;
  /** Every table the service owns, in order: the app module collects them (src/schema.ts). */
  migrations: readonly Migration[];
}

@Global()
@Module({})
export class InfrastructureModule {
  static forRoot({ config, metrics, migrations }: InfrastructureOptions): DynamicModule {
    const logger = new Logger('Infrastructure');
    return {
      module: InfrastructureModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: METRICS, useValue: metrics },
        { provide: LEDGER_OBSERVER, useValue: ledgerObserver(metrics) },
        {
          provide: LEDGER_SETTINGS,
          useValue: {
            orderRecoveryGraceMs: config.orderRecoveryGraceMs,
            orderRecoveryIntervalMs: config.orderRecoveryIntervalMs,
            walletWarmup: config.walletWarmup,
            walletWarmupMaxMs: config.walletWarmupMaxMs,
          } satisfies LedgerSettings,
        },
        { provide: MIGRATIONS, useValue: migrations },
        {
          provide: PG_POOL,
          // The database was checked (or created) before start-up: see startup-checks.ts.
          useFactory: async () => {
            const pool = createPool(config.database, {
              waitMs: config.databaseWaitMs,
              idleMs: config.databasePoolIdleMs,
              onWait: () => metrics.databaseWaits.inc({ kind: 'connection' }),
            });
            metrics.watchPool('main', pool);
            const applied = await migrate(pool, migrations);
            if (applied.length > 0) logger.log(`applied migrations: ${applied.join(', ')}`);
            return pool;
          },
        },
        {
          provide: EVENT_STORE,
          inject: [PG_POOL],
          useFactory: async (pool: Pool): Promise<EventStore> => new MeteredEventStore(await createEventStore(config, pool), metrics),
        },
        // Requests that are safe to run twice wait through a database failover.
        DatabaseWait,
        DatabaseWaitInterceptor,
        InfrastructureShutdown,
      ],
      exports: [APP_CONFIG, PG_POOL, EVENT_STORE, METRICS, MIGRATIONS, LEDGER_OBSERVER, LEDGER_SETTINGS, DatabaseWait, DatabaseWaitInterceptor],
    };
  }
}
