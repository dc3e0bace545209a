/**
 * The backlog policy: when orders wait for fulfilment longer or in greater
 * numbers than the limits allow, new submits are refused (503 SERVICE_BUSY,
 * with Retry-After) until the queue is back under them. An order refused so
 * freezes nothing and exists nowhere, and its nonce is given back, so the
 * merchant retries the same request unchanged. Orders already accepted are
 * never touched: they complete in turn.
 *
 * The queue is read at most once per REFRESH_MS, and only while submits come
 * in: an idle instance reads nothing. A submit never waits for the reading;
 * it is judged on the latest one (at most REFRESH_MS old).
 */
export interface IntakeLimits {
  /** Orders due for fulfilment and not yet taken by a worker; 0: no limit. */
  maxWaiting: number;
  /** Seconds the longest-waiting of them has waited; 0: no limit. */
  maxWaitS: number;
}

export interface QueueReading {
  waiting: number;
  oldestWaitS: number;
}

export interface IntakeStatus extends QueueReading {
  shedding: boolean;
  /** When the reading was taken (ms since the epoch); 0 before the first. */
  readAt: number;
  limits: IntakeLimits;
}

const REFRESH_MS = 1_000;
/** What a refused merchant is told to wait: about the time the queue takes to move by the refusals' worth. */
export const RETRY_AFTER_S = 2;

export class IntakeGuard {
  private reading: QueueReading = { waiting: 0, oldestWaitS: 0 };
  private readAt = 0;
  private refreshing?: Promise<void>;

  constructor(
    private readonly limits: IntakeLimits,
    /** Reads the queue, counting at most `cap` + 1 waiting orders. */
    private readonly read: (cap: number) => Promise<QueueReading>,
    private readonly onReadFailed: (error: unknown) => void = () => undefined,
  ) {}

  get enabled(): boolean {
    return this.limits.maxWaiting > 0 || this.limits.maxWaitS > 0;
  }

  /** Whether to refuse a submit now, on the latest reading; starts a new reading when it is stale. */
  shedding(now = Date.now()): boolean {
    if (!this.enabled) return false;
    if (now - this.readAt >= REFRESH_MS) void this.refresh();
    return this.over(this.reading);
  }

  /** The latest reading, fresh (read now if it is stale): for readiness and the metrics. */
  async status(): Promise<IntakeStatus> {
    if (this.enabled && Date.now() - this.readAt >= REFRESH_MS) await this.refresh();
    return { ...this.reading, shedding: this.enabled && this.over(this.reading), readAt: this.readAt, limits: this.limits };
  }

  private over({ waiting, oldestWaitS }: QueueReading): boolean {
    return (this.limits.maxWaiting > 0 && waiting > this.limits.maxWaiting) || (this.limits.maxWaitS > 0 && oldestWaitS > this.limits.maxWaitS);
  }

  private refresh(): Promise<void> {
    this.refreshing ??= this.read(this.limits.maxWaiting > 0 ? this.limits.maxWaiting : 10_000)
      .then(
        (reading) => {
          this.reading = reading;
          this.readAt = Date.now();
        },
        (error: unknown) => {
          // Keep the last reading; try again at the next submit after REFRESH_MS.
          this.readAt = Date.now();
          this.onReadFailed(error);
        },
      )
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
