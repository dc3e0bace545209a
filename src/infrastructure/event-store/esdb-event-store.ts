import { randomUUID } from 'node:crypto';
import {
  ANY as ESDB_ANY,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM as ESDB_NO_STREAM,
  START as ESDB_START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamSubscription,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import {
  ANY,
  NO_STREAM,
  START,
  WrongExpectedRevisionError,
  comparePositions,
  type AppendResult,
  type CheckedEvent,
  type EventStore,
  type EventToAppend,
  type ExpectedRevision,
  type GlobalPosition,
  type JsonObject,
  type LoadedEvent,
  type RecordedEvent,
  type ReplayedEvent,
  type StreamRevision,
  type Subscription,
  type SubscriptionOptions,
} from '../../ledger/ports/event-store.port';

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

/** The EventStoreDB adapter: a straight mapping of the port onto @eventstore/db-client. */
export class EsdbEventStore implements EventStore {
  private readonly subscriptions = new Set<Subscription>();

  constructor(private readonly client: EventStoreDBClient) {}

  static fromConnectionString(cs: string): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(cs));
  }

  async append(streamId: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const expectedRevision = expected === NO_STREAM ? ESDB_NO_STREAM : expected === ANY ? ESDB_ANY : expected;
    const data = events.map((e) => jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata }));
    try {
      const result = await this.client.appendToStream(streamId, data, { expectedRevision });
      // Only reachable if someone built the client with throwOnAppendFailure: false.
      if (!result.success) throw new WrongExpectedRevisionError(streamId, expected);
      if (!result.position) throw new Error(`EventStoreDB returned no position for an append to ${streamId}`);
      return { nextExpectedRevision: result.nextExpectedRevision, position: result.position };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(streamId, expected, error.actualVersion);
      }
      throw error;
    }
  }

  async readStream(streamId: string, fromRevision: StreamRevision = 0n, maxCount?: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(streamId, { fromRevision, direction: FORWARDS, maxCount })) {
        const event = resolved.event && toRecorded(resolved.event);
        if (event) out.push(event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  /** EventStoreDB sends each event whole: a replay gets it as readStream does. */
  readStreamForReplay(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<ReplayedEvent[]> {
    return this.readStream(streamId, fromRevision, maxCount);
  }

  readStreamForCheck(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<CheckedEvent[]> {
    return this.readStream(streamId, fromRevision, maxCount);
  }

  readStreamForLoad(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<LoadedEvent[]> {
    return this.readStream(streamId, fromRevision, maxCount);
  }

  async readStreams(streamIds: readonly string[]): Promise<RecordedEvent[][]> {
    const out: RecordedEvent[][] = [];
    // A few reads at a time: each is its own gRPC call.
    for (let i = 0; i < streamIds.length; i += 16) {
      out.push(...(await Promise.all(streamIds.slice(i, i + 16).map((id) => this.readStream(id)))));
    }
    return out;
  }

  async readAll(after: GlobalPosition, maxCount: number): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    let from = after;
    // System events are filtered here, not by the server, so a page can come
    // back short: keep reading until maxCount or the end of $all.
    while (out.length < maxCount) {
      // One extra, since ESDB reads from a position inclusively.
      const pageSize = maxCount - out.length + 1;
      let seen = 0;
      for await (const resolved of this.client.readAll({ fromPosition: toReadPosition(from), direction: FORWARDS, maxCount: pageSize })) {
        seen++;
        const raw = resolved.event;
        if (!raw || comparePositions(raw.position, from) <= 0) continue;
        from = raw.position;
        const event = toRecorded(raw);
        if (event && out.length < maxCount) out.push(event);
      }
      if (seen < pageSize) break;
    }
    return out;
  }

  subscribeToAll({ after, onEvents, onError }: SubscriptionOptions): Subscription {
    let stopped = false;
    let current: AllStreamSubscription | undefined;
    let last = after;
    let wake = (): void => undefined;
    const pause = (ms: number) =>
      stopped
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ms);
            wake = () => (clearTimeout(timer), resolve());
          });
    const report = (error: unknown) => {
      try {
        onError?.(error);
      } catch {
        // A failing error reporter must not kill the subscription.
      }
    };

    const run = async (): Promise<void> => {
      let backoff = MIN_BACKOFF_MS;
      while (!stopped) {
        const subscription = (current = this.client.subscribeToAll({
          fromPosition: toReadPosition(last),
          filter: excludeSystemEvents(),
        }));
        // Errors reach the loop through the iterator; this keeps one that
        // arrives after the loop has let go from becoming an uncaught exception.
        subscription.on('error', () => undefined);
        try {
          // Iterating (rather than 'data' events) serialises handler calls and
          // applies back-pressure to the gRPC stream. Batches are of one event.
          for await (const resolved of subscription) {
            const raw = resolved.event;
            // ESDB starts after the given position, and after a resubscribe we
            // may see events again: the position check makes both exact.
            if (!raw || comparePositions(raw.position, last) <= 0) continue;
            const event = toRecorded(raw);
            for (let retry = MIN_BACKOFF_MS; event; retry = Math.min(retry * 2, MAX_BACKOFF_MS)) {
              if (stopped) return;
              try {
                await onEvents([event]);
                break;
              } catch (error) {
                report(error);
                await pause(retry);
              }
            }
            last = raw.position;
            backoff = MIN_BACKOFF_MS;
          }
          if (!stopped) throw new Error('EventStoreDB subscription ended unexpectedly');
        } catch (error) {
          if (stopped) return;
          report(error);
          await pause(backoff);
          backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        } finally {
          await subscription.unsubscribe().catch(() => undefined);
        }
      }
    };

    const done = run();
    const handle: Subscription = {
      stop: async () => {
        stopped = true;
        wake();
        // unsubscribe() alone may leave a pending read waiting; destroying the
        // stream ends the iterator, after any running handler call returns.
        current?.destroy();
        await done;
        this.subscriptions.delete(handle);
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.client.dispose();
  }
}

function toReadPosition(p: GlobalPosition): ReadPosition {
  return comparePositions(p, START) === 0 ? ESDB_START : { commit: p.commit, prepare: p.prepare };
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** Our events only: JSON, outside system streams; anything else is someone else's. */
function toRecorded(raw: EsdbRecordedEvent): RecordedEvent | undefined {
  if (!raw.isJson || raw.type.startsWith('$') || raw.streamId.startsWith('$') || !isJsonObject(raw.data)) {
    return undefined;
  }
  if (!raw.position) throw new Error('EventStoreDB returned an event without a position: server older than 22.6?');
  return {
    id: raw.id,
    streamId: raw.streamId,
    revision: raw.revision,
    position: { commit: raw.position.commit, prepare: raw.position.prepare },
    type: raw.type,
    data: raw.data,
    metadata: isJsonObject(raw.metadata) ? raw.metadata : {},
    createdAt: raw.created,
  };
}
