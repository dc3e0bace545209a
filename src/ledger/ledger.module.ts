import { Injectable, Inject, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { AppConfig } from '../config/config';
import { EVENT_STORE, EventStore } from './ports/event-store.port';
import { RECOVERY_CANDIDATES, RecoveryCandidates } from './ports/recovery-candidates.port';
import { WARMUP_CANDIDATES, WarmupCandidates } from './ports/warmup-candidates.port';
import { APP_CONFIG } from '../infrastructure/infrastructure.tokens';
import { Clock, systemClock } from '../shared/clock';
import { CLOCK } from './ledger.tokens';
import { OrderWorkflow } from './order/order-workflow';
import { OrderRecovery } from './process-manager/order-recovery';
import { WalletWriter } from './wallet/wallet-writer';
import { WalletWarmup } from './wallet/wallet-warmup';
import { logFailure } from '../infrastructure/logging/log-failure';
import { METRICS, Metrics } from '../infrastructure/metrics/metrics';

/** Runs the process manager at start-up and then on an interval. */
@Injectable()
class OrderRecoverySchedule implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('OrderRecovery');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly recovery: OrderRecovery,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      this.running = this.recovery
        .sweep(this.config.orderRecoveryGraceMs)
        .then((r) => {
          if (r.ordersAdvanced + r.holdsReleased > 0) this.logger.log(`advanced ${r.ordersAdvanced} orders, released ${r.holdsReleased} stray holds`);
        })
        .catch((error) => logFailure(this.logger, 'sweep failed', error))
        .finally(() => {
          this.running = undefined;
          this.timer = setTimeout(tick, this.config.orderRecoveryIntervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async onModuleDestroy(): Promise<void> {
    clearTimeout(this.timer);
    await this.running;
    clearTimeout(this.timer);
  }
}

/** Starts the wallets' start-up load with the application, and stops it with the application. */
@Injectable()
class WalletWarmupLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly warmup: WalletWarmup) {}

  onApplicationBootstrap(): Promise<void> {
    return this.warmup.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.warmup.stop();
  }
}

@Module({
  imports: [CqrsModule.forRoot()],
  providers: [
    { provide: CLOCK, useValue: systemClock },
    {
      provide: WalletWriter,
      inject: [EVENT_STORE, METRICS],
      useFactory: (store: EventStore, metrics: Metrics) =>
        new WalletWriter(store, {
          onBatch: (size) => metrics.walletBatchSize.observe(size),
          onConflict: () => metrics.walletConflicts.inc(),
          onLoad: (events, seconds) => {
            metrics.walletLoads.observe(seconds);
            metrics.walletLoadEvents.inc(events);
          },
        }),
    },
    {
      provide: OrderWorkflow,
      inject: [EVENT_STORE, WalletWriter, CLOCK],
      useFactory: (store: EventStore, wallets: WalletWriter, clock: Clock) => new OrderWorkflow(store, wallets, clock),
    },
    {
      provide: OrderRecovery,
      inject: [RECOVERY_CANDIDATES, EVENT_STORE, OrderWorkflow],
      useFactory: (candidates: RecoveryCandidates, store: EventStore, workflow: OrderWorkflow) => new OrderRecovery(candidates, store, workflow),
    },
    OrderRecoverySchedule,
    {
      provide: WalletWarmup,
      inject: [WalletWriter, WARMUP_CANDIDATES, APP_CONFIG],
      useFactory: (writer: WalletWriter, candidates: WarmupCandidates, config: AppConfig) =>
        new WalletWarmup(writer, candidates, config.walletWarmup, config.walletWarmupMaxMs),
    },
    WalletWarmupLifecycle,
  ],
  // The command handlers live in the capabilities that send their commands: they need these.
  exports: [CLOCK, OrderWorkflow, OrderRecovery, WalletWriter, WalletWarmup],
})
export class LedgerModule {}
