/**
 * What the ledger needs from the outside to run its background work, and
 * what it reports: the application provides both (the infrastructure
 * module), so the core reads no configuration and knows no metrics library.
 */
export interface LedgerSettings {
  /** An order left between two appends for this long is finished by the process manager. */
  readonly orderRecoveryGraceMs: number;
  readonly orderRecoveryIntervalMs: number;
  /** Wallets loaded at start-up, before the instance reports ready. */
  readonly walletWarmup: number;
  readonly walletWarmupMaxMs: number;
}

export interface LedgerObserver {
  /** The wallet writer appended a batch of this many commands. */
  walletBatch(size: number): void;
  /** A batch's append lost to another writer of the wallet (another instance) and is decided again. */
  walletConflict(): void;
  /** A wallet was read whole (its first command, or warm): the events replayed and the seconds it took. */
  walletLoaded(events: number, seconds: number): void;
  /** Background work failed (it is tried again later): the observer decides how loud, e.g. one line for an outage. */
  backgroundFailure(source: string, message: string, error: unknown): void;
}

export const LEDGER_SETTINGS = Symbol('LedgerSettings');
export const LEDGER_OBSERVER = Symbol('LedgerObserver');
