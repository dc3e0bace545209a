import { GlobalPosition, RecordedEvent, Subscription, SubscriptionOptions } from '../../ledger/ports/event-store.port';
import { ChangeNotifier, WakeUp } from './change-notifier';

/**
 * Up to a batch of events after a position, and what lies beyond them.
 * 'more': more events are readable now. 'held': events are committed behind
 * a transaction still running anywhere on the server, readable once it ends,
 * which may announce nothing. 'none': nothing yet; an append from now on
 * announces itself.
 */
export interface SubscriptionRead {
  events: RecordedEvent[];
  beyond: 'more' | 'held' | 'none';
}

/** What a subscription reads the log through (PostgresEventStore.readForSubscription). */
export interface SubscriptionSource {
  readForSubscription(after: GlobalPosition, maxCount: number): Promise<SubscriptionRead>;
}

/**
 * A subscription to the whole log: reads a batch, hands it over, and reads
 * again at once while more is there; once caught up it waits for the next
 * append's wake-up or the poll interval.
 */
export class PollingSubscription implements Subscription {
  private stopped = false;
  private readonly wake: WakeUp;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: SubscriptionSource,
    notifier: ChangeNotifier,
    private readonly options: SubscriptionOptions,
    private readonly pollIntervalMs: number,
  ) {
    // Listen before the first read so that no notification falls between them.
    this.wake = notifier.listen();
    this.done = this.run().finally(() => this.wake.close());
  }

  private async run(): Promise<void> {
    const maxBatch = this.options.maxBatchSize ?? 500;
    let after = this.options.after;
    let failures = 0;
    let backoff = 0;
    while (!this.stopped) {
      let read: SubscriptionRead;
      try {
        read = await this.store.readForSubscription(after, maxBatch);
        if (read.events.length > 0 && !this.stopped) await this.options.onEvents(read.events);
        failures = 0;
      } catch (error) {
        this.options.onError?.(error);
        await this.wake.wait(Math.min(100 * 2 ** ++failures, 5000));
        continue;
      }
      if (read.events.length > 0) after = read.events[read.events.length - 1].position;
      if (read.beyond === 'more') {
        backoff = 0;
        continue;
      }
      if (read.beyond === 'held') {
        // Behind an older transaction still open, whose end may announce
        // nothing: re-read soon, backing off to the poll interval.
        backoff = backoff > 0 ? Math.min(backoff * 2, this.pollIntervalMs) : 2;
        await this.wake.wait(backoff);
        continue;
      }
      // Caught up: the next append wakes us (one that commits while we read
      // has already left its wake-up pending), or the poll does.
      backoff = 0;
      await this.wake.wait(this.pollIntervalMs);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.interrupt();
    await this.done;
  }
}
