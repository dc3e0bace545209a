import { Logger } from '@nestjs/common';

export interface JobDispatcherOptions<Job> {
  /** What the jobs are, for the line logged at shutdown: "callbacks", "fulfilment jobs". */
  name?: string;
  /** Jobs in flight at most; 0 turns the dispatcher off. */
  concurrency: number;
  /** How often an idle dispatcher looks anyway (IDLE_POLL_MS unless a test wants it sooner). */
  pollMs: number;
  /** Claims (leases) up to `limit` due jobs. */
  claim(limit: number): Promise<Job[]>;
  run(job: Job): Promise<void>;
  describe(job: Job): string;
  log(message: string, error?: unknown): void;
}

/** After a job ends, wait this long for others to end too, and claim for all the free slots at once. */
const CLAIM_COALESCE_MS = 5;
/**
 * An idle dispatcher's look for work nobody announced. New work is announced:
 * the projections nudge every instance's workers when they apply the events
 * that make it, and a job put off until later nudges its dispatcher for then
 * (nudgeIn). What is left is a lease that ran out on a stopped instance, and
 * work added by an instance whose own dispatcher is off: found within this.
 * Each look is a commit, so an idle instance makes about one every few seconds.
 */
export const IDLE_POLL_MS = 5_000;
/** Wake-ups asked for later are grouped to this many ms: a retry storm sets one timer per slice, not one per job. */
const LATER_SLICE_MS = 50;

/**
 * The loop shared by the workers that lease jobs from Postgres: claim as many
 * due jobs as there are free slots, run them, and claim again shortly after
 * jobs end (one claim for the slots freed meanwhile) or after `pollMs`. A
 * failing job is only logged: its lease expires and it is claimed again.
 */
export class JobDispatcher<Job> {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** A wake-up came while the loop was claiming, not waiting: it goes round again at once instead of waiting for the next. */
  private wokenWhileClaiming = false;
  private wakeTimer?: NodeJS.Timeout;
  private readonly later = new Map<number, NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: JobDispatcherOptions<Job>) {}

  start(): void {
    if (this.running || this.options.concurrency === 0) return;
    this.running = true;
    this.loop = this.dispatch();
  }

  /** Stops claiming and waits for the jobs in flight. */
  async stop(): Promise<void> {
    if (this.running && this.options.name) {
      new Logger('Shutdown').log(`${this.options.name}: stopped claiming; waiting for ${this.inFlight.size} in flight`);
    }
    this.running = false;
    clearTimeout(this.wakeTimer);
    for (const timer of this.later.values()) clearTimeout(timer);
    this.later.clear();
    this.wake?.();
    await this.loop;
    await Promise.all(this.inFlight);
  }

  /** New work may be due: claim shortly, without waiting for the poll. */
  nudge(): void {
    if (this.running) this.wakeSoon();
  }

  /** A job was put off: claim again once it is due, `delayMs` from now, without waiting for the idle poll. */
  nudgeIn(delayMs: number): void {
    if (!this.running) return;
    const slice = Math.ceil((Date.now() + Math.max(0, delayMs)) / LATER_SLICE_MS) * LATER_SLICE_MS;
    if (this.later.has(slice)) return;
    const timer = setTimeout(() => {
      this.later.delete(slice);
      this.wakeSoon();
    }, slice - Date.now());
    timer.unref();
    this.later.set(slice, timer);
  }

  private wakeSoon(): void {
    if (this.wakeTimer) return;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wokenWhileClaiming = true;
      this.wake?.();
    }, CLAIM_COALESCE_MS);
  }

  private async dispatch(): Promise<void> {
    while (this.running) {
      this.wokenWhileClaiming = false;
      const free = this.options.concurrency - this.inFlight.size;
      let claimed: Job[] = [];
      if (free > 0) {
        claimed = await this.options.claim(free).catch((error) => {
          this.options.log('claiming jobs failed', error);
          return [];
        });
      }
      for (const job of claimed) {
        const task: Promise<void> = this.options
          .run(job)
          .catch((error) => this.options.log(`${this.options.describe(job)} failed; its lease will expire and it is retried`, error))
          .finally(() => {
            this.inFlight.delete(task);
            this.wakeSoon();
          });
        this.inFlight.add(task);
      }
      // Claimed every free slot: go round at once (the next pass waits for a slot).
      if (free > 0 && claimed.length === free) continue;
      if (this.wokenWhileClaiming) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.options.pollMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }
}

/** A worker whose jobs a JobDispatcher claims and runs: starting, stopping and nudging it are the dispatcher's. */
export abstract class DispatchedWorker<Job> {
  protected abstract readonly dispatcher: JobDispatcher<Job>;

  start(): void {
    this.dispatcher.start();
  }

  stop(): Promise<void> {
    return this.dispatcher.stop();
  }

  /** Work was just added: claim now rather than at the next poll. */
  nudge(): void {
    this.dispatcher.nudge();
  }

  /** A job was put off for `delayMs`: claim again then. */
  protected nudgeIn(delayMs: number): void {
    this.dispatcher.nudgeIn(delayMs);
  }
}
