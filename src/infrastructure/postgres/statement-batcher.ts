import { isDatabaseUnavailable } from './database-wait';

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export interface StatementBatcherOptions {
  /** Items per flush at most. */
  maxBatch: number;
  /** Flushes running at once at most; further items wait and join the next. */
  maxInFlight: number;
  /**
   * When a flush of several items fails for a reason other than the
   * database being unreachable (one bad item, say), flush each item alone,
   * so that only the bad one fails.
   */
  isolateFailures?: boolean;
}

/**
 * Runs the work of concurrent callers as one statement (for writes: one
 * commit, a group commit). Items that arrive in the same turn of the event
 * loop go together, and items that arrive while the flushes in flight are
 * busy wait for the next one, so an idle service adds no delay and a busy one
 * sends many items at a time: the cost of a round trip, and of a WAL flush
 * for writes, is shared. (A round trip is dear on a busy machine: the socket
 * write wakes the database's process, which then competes for the core.)
 *
 * `flush` answers each item in order: a result, or an Error for that item
 * alone. When `flush` itself rejects, every item of that flush fails with it
 * (unless `isolateFailures` tries them one by one first).
 */
export class StatementBatcher<Item, Result> {
  private readonly waiting: Waiting<Item, Result>[] = [];
  private inFlight = 0;
  private startScheduled = false;

  constructor(
    private readonly flush: (items: readonly Item[]) => Promise<readonly (Result | Error)[]>,
    private readonly options: StatementBatcherOptions,
  ) {}

  run(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.startScheduled) return;
      this.startScheduled = true;
      // At the end of this turn of the event loop: the callers that the same
      // turn's I/O woke (many requests, under load) join one flush.
      setImmediate(() => {
        this.startScheduled = false;
        this.start();
      });
    });
  }

  private start(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.settle(batch).finally(() => {
        this.inFlight--;
        this.start();
      });
    }
  }

  private async settle(batch: Waiting<Item, Result>[]): Promise<void> {
    try {
      const results = await this.flush(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`a flush of ${batch.length} items answered ${results.length}`);
      for (const [i, waiting] of batch.entries()) {
        const result = results[i];
        if (result instanceof Error) waiting.reject(result);
        else waiting.resolve(result);
      }
    } catch (error) {
      if (this.options.isolateFailures && batch.length > 1 && !isDatabaseUnavailable(error)) {
        await Promise.all(batch.map((waiting) => this.settle([waiting])));
        return;
      }
      for (const waiting of batch) waiting.reject(error);
    }
  }
}
