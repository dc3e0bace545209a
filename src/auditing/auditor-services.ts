import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore, GlobalPosition } from '../ledger/ports/event-store.port';
import { PG_POOL } from '../infrastructure/infrastructure.tokens';
import { checkWalletChain, ChainStatus } from './chain-check';
import { VerificationReport, verifyReadModels, VerifyOptions } from './verification/read-model-verifier';
import { PostgresWalletSnapshots, WalletSnapshots } from './wallet-snapshots.reader';
import { BalanceAsOf, balanceAsOf, openStatement, StatementStream, StatementWindow } from './wallet-statement';

/**
 * A wallet's history for the back office, replayed from the event store:
 * statements, the hash chain, the balance as of any instant. The snapshots
 * only tell a replay where it may start.
 */
@Injectable()
export class WalletHistory {
  private readonly snapshots: WalletSnapshots;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PG_POOL) pool: Pool,
  ) {
    this.snapshots = new PostgresWalletSnapshots(pool);
  }

  /** A page of `limit` lines, or without a limit the whole statement in the window (see openStatement). */
  statement(merchantId: string, window: StatementWindow, limit?: number): Promise<StatementStream | undefined> {
    return openStatement(this.store, this.snapshots, merchantId, window, limit);
  }

  chain(merchantId: string): Promise<ChainStatus | undefined> {
    return checkWalletChain(this.store, merchantId);
  }

  balanceAsOf(merchantId: string, asOf: { at?: Date; position?: GlobalPosition }, options: { fullReplay?: boolean } = {}): Promise<BalanceAsOf | undefined> {
    return balanceAsOf(this.store, this.snapshots, merchantId, asOf, options);
  }
}

/** The read models checked against a replay of the log (see verifyReadModels). */
@Injectable()
export class ReadModelVerification {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  verify(options: VerifyOptions): Promise<VerificationReport> {
    return verifyReadModels(this.pool, this.store, options);
  }
}
