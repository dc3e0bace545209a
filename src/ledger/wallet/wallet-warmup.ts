import { Logger } from '@nestjs/common';
import { WarmupCandidates } from '../ports/warmup-candidates.port';
import { WalletWriter } from './wallet-writer';

/** Where the start-up load of wallets stands, for the readiness probe. */
export interface WarmupStatus {
  /**
   * Loading, or over: done (or off), or failed (the wallets then load at
   * their first command). `loading` past the longest wait allowed holds
   * readiness back no more.
   */
  state: 'loading' | 'done' | 'failed';
  /** Whether the instance may report ready: the load is over, or has run as long as it may hold it back. */
  ready: boolean;
  /** Wallets asked for; loaded, with the events replayed, once done. */
  wanted: number;
  loaded?: number;
  events?: number;
  ms?: number;
}

/** Wallet loads under way at once: the rest of the start-up (projections catching up) shares the machine. */
const CONCURRENCY = 2;

/**
 * Loads the longest wallets written in the last week (WALLET_WARMUP of them)
 * at start-up, so that their first commands after a restart do not each
 * wait for a replay of the wallet's whole history. The instance reports
 * ready once they are loaded, or after WALLET_WARMUP_MAX_MS of loading:
 * behind a load balancer, no request reaches it before.
 */
export class WalletWarmup {
  private readonly logger = new Logger('WalletWarmup');
  private readonly abort = new AbortController();
  private current: Omit<WarmupStatus, 'ready'>;
  private running?: Promise<void>;
  private startedAt?: number;

  constructor(
    private readonly writer: WalletWriter,
    private readonly candidates: WarmupCandidates,
    private readonly count: number,
    /** The longest the load holds readiness back; after it the rest load on in the background. */
    private readonly maxWaitMs: number,
    /** How a failed load is reported (the application's observer makes an outage one line). */
    private readonly reportFailure: (message: string, error: unknown) => void = (message, error) => new Logger('WalletWarmup').error(message, error),
  ) {
    this.current = { state: count === 0 ? 'done' : 'loading', wanted: 0 };
  }

  get status(): WarmupStatus {
    const overdue = this.startedAt !== undefined && Date.now() - this.startedAt >= this.maxWaitMs;
    return { ...this.current, ready: this.current.state !== 'loading' || overdue };
  }

  /**
   * Chooses the wallets, then loads them in the background. Awaited at
   * start-up: the choice is one short query, and with nothing to load the
   * instance is ready the moment it listens.
   */
  async start(): Promise<void> {
    if (this.count === 0 || this.running) return;
    const started = (this.startedAt = Date.now());
    let merchants: string[];
    try {
      merchants = await this.candidates.longestActiveWallets(this.count);
    } catch (error) {
      this.failed(started, error);
      return;
    }
    if (merchants.length === 0) {
      this.current = { state: 'done', wanted: 0, loaded: 0, events: 0, ms: Date.now() - started };
      return;
    }
    this.current = { state: 'loading', wanted: merchants.length };
    this.running = this.load(merchants, started);
  }

  /** Stops after the loads under way. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async load(merchants: readonly string[], started: number): Promise<void> {
    try {
      const { wallets, events } = await this.writer.warm(merchants, { concurrency: CONCURRENCY, signal: this.abort.signal });
      const ms = Date.now() - started;
      this.current = { state: 'done', wanted: merchants.length, loaded: wallets, events: Number(events), ms };
      if (wallets > 0) this.logger.log(`loaded ${wallets} wallets (${events} events) in ${ms} ms`);
    } catch (error) {
      this.failed(started, error);
    }
  }

  private failed(started: number, error: unknown): void {
    this.current = { state: 'failed', wanted: this.current.wanted, ms: Date.now() - started };
    this.reportFailure('loading wallets at start-up failed; each loads at its first command instead', error);
  }
}
