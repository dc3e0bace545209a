import {
  AppendOptions,
  AppendResult,
  CheckedEvent,
  EventStore,
  EventKey,
  EventToAppend,
  ExpectedRevision,
  GlobalPosition,
  ReadAllOptions,
  LoadedEvent,
  RecordedEvent,
  ReplayedEvent,
  StreamAppend,
  StreamRevision,
  Subscription,
  SubscriptionOptions,
} from '../../ledger/ports/event-store.port';
import { Metrics } from './metrics';

/**
 * The event store as the service sees it, with each append (single or
 * across streams) timed and each order's final event counted. The count is taken at the append that makes
 * the order final, which succeeds once per order whoever appends it, so the
 * sum over all instances is the number of orders that became final.
 */
export class MeteredEventStore implements EventStore {
  /** Offered exactly when the store offers it: callers test for it to choose between one append and several. */
  readonly appendAtomically?: (appends: readonly StreamAppend[], options?: AppendOptions) => Promise<AppendResult[]>;

  constructor(
    /** The store measured. */
    readonly inner: EventStore,
    private readonly metrics: Metrics,
  ) {
    const atomically = inner.appendAtomically?.bind(inner);
    if (atomically) {
      this.appendAtomically = async (appends, options) => {
        const started = process.hrtime.bigint();
        const results = await atomically(appends, options);
        this.appended(
          started,
          appends.flatMap((a) => a.events),
        );
        return results;
      };
    }
  }

  async append(streamId: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    const started = process.hrtime.bigint();
    const result = await this.inner.append(streamId, events, expected);
    this.appended(started, events);
    return result;
  }

  private appended(started: bigint, events: readonly EventToAppend[]): void {
    this.metrics.appendDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
    for (const event of events) {
      if (event.type === 'OrderSucceeded') this.metrics.ordersFinal.inc({ status: 'success', fail_code: '' });
      else if (event.type === 'OrderFailed') this.metrics.ordersFinal.inc({ status: 'failed', fail_code: String(event.data.failCode ?? '') });
    }
  }

  readStream(streamId: string, fromRevision?: StreamRevision, maxCount?: number): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, fromRevision, maxCount);
  }

  readStreamForReplay(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<ReplayedEvent[]> {
    return this.inner.readStreamForReplay(streamId, fromRevision, maxCount);
  }

  readStreamForCheck(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<CheckedEvent[]> {
    return this.inner.readStreamForCheck(streamId, fromRevision, maxCount);
  }

  readStreamForLoad(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<LoadedEvent[]> {
    return this.inner.readStreamForLoad(streamId, fromRevision, maxCount);
  }

  readEventsAt(keys: readonly EventKey[]): Promise<(ReplayedEvent | undefined)[]> {
    return this.inner.readEventsAt(keys);
  }

  readStreams(streamIds: readonly string[]): Promise<RecordedEvent[][]> {
    return this.inner.readStreams(streamIds);
  }

  readAll(after: GlobalPosition, maxCount: number, options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(after, maxCount, options);
  }

  subscribeToAll(options: SubscriptionOptions): Subscription {
    return this.inner.subscribeToAll(options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
