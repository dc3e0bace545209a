import { Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { Clock, systemClock } from '../shared/clock';
import { EVENT_STORE, EventStore } from './ports/event-store.port';
import { LEDGER_OBSERVER, LEDGER_SETTINGS, LedgerObserver, LedgerSettings } from './ports/ledger-settings.port';
import { RECOVERY_CANDIDATES, RecoveryCandidates } from './ports/recovery-candidates.port';
import { WARMUP_CANDIDATES, WarmupCandidates } from './ports/warmup-candidates.port';
import { CLOCK, ORDER_APPENDS } from './ledger.tokens';
import { AdjustWalletHandler } from './commands/adjust-wallet/adjust-wallet.handler';
import { DepositFundsHandler } from './commands/deposit-funds/deposit-funds.handler';
import { MarkResultUnknownHandler } from './commands/mark-result-unknown/mark-result-unknown.handler';
import { OpenWalletHandler } from './commands/open-wallet/open-wallet.handler';
import { RecordUpstreamAttemptHandler } from './commands/record-upstream-attempt/record-upstream-attempt.handler';
import { ReleaseFundsHandler } from './commands/release-funds/release-funds.handler';
import { ResolveOrderHandler } from './commands/resolve-order/resolve-order.handler';
import { SettleOrderHandler } from './commands/settle-order/settle-order.handler';
import { SubmitOrderHandler } from './commands/submit-order/submit-order.handler';
import { OrderAppends, orderAppendsFor } from './order/order-appends';
import { OrderOutcomes } from './order/order-outcomes';
import { OrderSteps } from './order/order-steps';
import { OrderRecovery } from './process-manager/order-recovery';
import { WalletWriter } from './wallet/wallet-writer';
import { WalletWarmup } from './wallet/wallet-warmup';

/** Runs the process manager at start-up and then on an interval. */
@Injectable()
class OrderRecoverySchedule implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('OrderRecovery');
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly recovery: OrderRecovery,
    @Inject(LEDGER_SETTINGS) private readonly settings: LedgerSettings,
    @Inject(LEDGER_OBSERVER) private readonly observer: LedgerObserver,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      this.running = this.recovery
        .sweep(this.settings.orderRecoveryGraceMs)
        .then((r) => {
          if (r.ordersAdvanced + r.holdsReleased > 0) this.logger.log(`advanced ${r.ordersAdvanced} orders, released ${r.holdsReleased} stray holds`);
        })
        .catch((error) => this.observer.backgroundFailure('OrderRecovery', 'sweep failed', error))
        .finally(() => {
          this.running = undefined;
          this.timer = setTimeout(tick, this.settings.orderRecoveryIntervalMs);
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

/** One handler per command: each is found by its command's name under commands/. */
const COMMAND_HANDLERS = [
  SubmitOrderHandler,
  RecordUpstreamAttemptHandler,
  SettleOrderHandler,
  ReleaseFundsHandler,
  MarkResultUnknownHandler,
  ResolveOrderHandler,
  OpenWalletHandler,
  DepositFundsHandler,
  AdjustWalletHandler,
];

/**
 * The core: the command handlers and what they share. It needs an
 * EVENT_STORE, the read models' RECOVERY_CANDIDATES and WARMUP_CANDIDATES,
 * and LEDGER_SETTINGS and LEDGER_OBSERVER, all provided by the application.
 */
@Module({
  imports: [CqrsModule.forRoot()],
  providers: [
    { provide: CLOCK, useValue: systemClock },
    {
      provide: WalletWriter,
      inject: [EVENT_STORE, LEDGER_OBSERVER],
      useFactory: (store: EventStore, observer: LedgerObserver) =>
        new WalletWriter(store, {
          onBatch: (size) => observer.walletBatch(size),
          onConflict: () => observer.walletConflict(),
          onLoad: (events, seconds) => observer.walletLoaded(events, seconds),
        }),
    },
    {
      provide: OrderSteps,
      inject: [EVENT_STORE, WalletWriter, CLOCK],
      useFactory: (store: EventStore, wallets: WalletWriter, clock: Clock) => new OrderSteps(store, wallets, clock),
    },
    {
      provide: ORDER_APPENDS,
      inject: [EVENT_STORE, WalletWriter, OrderSteps, CLOCK],
      useFactory: orderAppendsFor,
    },
    {
      provide: OrderOutcomes,
      inject: [EVENT_STORE, ORDER_APPENDS, OrderSteps],
      useFactory: (store: EventStore, appends: OrderAppends, steps: OrderSteps) => new OrderOutcomes(store, appends, steps),
    },
    ...COMMAND_HANDLERS,
    {
      provide: OrderRecovery,
      inject: [RECOVERY_CANDIDATES, EVENT_STORE, OrderSteps],
      useFactory: (candidates: RecoveryCandidates, store: EventStore, steps: OrderSteps) => new OrderRecovery(candidates, store, steps),
    },
    OrderRecoverySchedule,
    {
      provide: WalletWarmup,
      inject: [WalletWriter, WARMUP_CANDIDATES, LEDGER_SETTINGS, LEDGER_OBSERVER],
      useFactory: (writer: WalletWriter, candidates: WarmupCandidates, settings: LedgerSettings, observer: LedgerObserver) =>
        new WalletWarmup(writer, candidates, settings.walletWarmup, settings.walletWarmupMaxMs, (message, error) =>
          observer.backgroundFailure('WalletWarmup', message, error),
        ),
    },
    WalletWarmupLifecycle,
  ],
  exports: [CLOCK, OrderRecovery, WalletWriter, WalletWarmup],
})
export class LedgerModule {}
