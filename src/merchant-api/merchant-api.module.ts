import {
  Inject,
  Injectable,
  Logger,
  MiddlewareConsumer,
  Module,
  NestModule,
  OnApplicationShutdown,
  OnModuleDestroy,
  OnModuleInit,
  RequestMethod,
} from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../config/config';
import { EVENT_STORE, EventStore } from '../ledger/ports/event-store.port';
import { APP_CONFIG, PG_POOL } from '../infrastructure/infrastructure.tokens';
import { createPool } from '../infrastructure/postgres/connection';
import { METRICS, Metrics } from '../infrastructure/metrics/metrics';
import { LedgerModule } from '../ledger/ledger.module';
import { BalanceController } from './balance/balance.controller';
import { WalletBalanceReader } from './balance/wallet-balance.reader';
import { CatalogueReader } from './products/catalogue.reader';
import { MerchantGatewayMiddleware } from './gateway/merchant-gateway.middleware';
import { ReplayGuard } from './gateway/replay-guard';
import { IntakeGuard } from './gateway/intake-guard';
import { waitingJobs } from '../../projections/fulfilment-jobs.queries';
import { OrderReader } from './orders/order.reader';
import { ProductsController } from './products/products.controller';
import { QueryOrderController } from './query/query-order.controller';
import { SubmitOrderController } from './submit/submit-order.controller';
import { SubmitOrderService } from './submit/submit-order.service';
import { VerifySignatureController } from './verify-signature/verify-signature.controller';

const REPLAY_POOL = Symbol('ReplayPool');

/** Purges expired nonces once a minute; closes the replay guard's pool once the HTTP server has stopped. */
@Injectable()
class NonceHousekeeping implements OnModuleInit, OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('NonceHousekeeping');
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly guard: ReplayGuard,
    @Inject(REPLAY_POOL) private readonly pool: Pool,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => this.guard.purgeExpired().catch((e) => this.logger.warn(`purge failed: ${e}`)), 60_000);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  // Nest stops the HTTP server between the destroy and the shutdown hooks:
  // requests still being served during shutdown need this pool.
  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The merchant API v2: /api/v2/*, signed requests. */
@Module({
  imports: [LedgerModule],
  controllers: [ProductsController, SubmitOrderController, QueryOrderController, BalanceController, VerifySignatureController],
  providers: [
    {
      provide: REPLAY_POOL,
      inject: [APP_CONFIG, METRICS],
      // Its own pool: admitting a request never queues behind ledger work.
      useFactory: (config: AppConfig, metrics: Metrics) => {
        const pool = createPool(config.database, {
          max: 10,
          waitMs: config.databaseWaitMs,
          idleMs: config.databasePoolIdleMs,
          onWait: () => metrics.databaseWaits.inc({ kind: 'connection' }),
        });
        metrics.watchPool('admission', pool);
        return pool;
      },
    },
    { provide: ReplayGuard, inject: [REPLAY_POOL, APP_CONFIG], useFactory: (pool: Pool, config: AppConfig) => new ReplayGuard(pool, config.databaseWaitMs) },
    {
      provide: IntakeGuard,
      inject: [PG_POOL, APP_CONFIG],
      useFactory: (pool: Pool, config: AppConfig) => {
        const logger = new Logger('IntakeGuard');
        return new IntakeGuard(
          { maxWaiting: config.intakeMaxWaiting, maxWaitS: config.intakeMaxWaitS },
          (cap) => waitingJobs(pool, cap),
          (error) => logger.warn(`could not read the fulfilment queue: ${String(error)}`),
        );
      },
    },
    { provide: CatalogueReader, inject: [PG_POOL], useFactory: (pool: Pool) => new CatalogueReader(pool) },
    {
      provide: OrderReader,
      inject: [PG_POOL, EVENT_STORE],
      useFactory: (pool: Pool, store: EventStore) => new OrderReader(pool, store),
    },
    {
      provide: WalletBalanceReader,
      inject: [PG_POOL, EVENT_STORE],
      useFactory: (pool: Pool, store: EventStore) => new WalletBalanceReader(pool, store),
    },
    NonceHousekeeping,
    MerchantGatewayMiddleware,
    SubmitOrderService,
  ],
  exports: [IntakeGuard],
})
export class MerchantApiModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(MerchantGatewayMiddleware).forRoutes({ path: 'api/*path', method: RequestMethod.ALL });
  }
}
