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
  streamNameFilter,
  jsonEvent,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
  type StreamMetadata,
} from '@eventstore/db-client';
import {
  ANY,
  NO_STREAM,
  START,
  WrongExpectedRevisionError,
  comparePositions,
  type AppendResult,
  type CheckedEvent,
  type EventKey,
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
import { subscribeInBatches } from './esdb-subscription';

/** What the adapter calls of the client: a stand-in with these methods serves the unit tests. */
export type EsdbClient = Pick<EventStoreDBClient, 'appendToStream' | 'readStream' | 'readAll' | 'subscribeToAll' | 'getStreamMetadata' | 'dispose'>;

export interface EsdbSettings {
  /**
   * How long a read may take before it fails as an outage. The client (6.x)
   * gives its streaming reads no deadline of their own, whatever `deadline`
   * says, so a read sent to a node that stopped answering would wait for ever.
   */
  readDeadlineMs: number;
  /** Waits after a failed subscription or batch: from minMs, doubling to maxMs. */
  backoff: { minMs: number; maxMs: number };
  /**
   * Put before every stream name on the server (EVENTSTORE_STREAM_PREFIX);
   * reads of $all see only the streams that carry it, and the service sees
   * the names without it. Several ledgers can so share one server, each
   * with a log of its own: the test suites, each on its own database.
   */
  streamPrefix: string;
}

const DEFAULT_SETTINGS: EsdbSettings = { readDeadlineMs: 10_000, backoff: { minMs: 500, maxMs: 5_000 }, streamPrefix: '' };

/**
 * Writes and the reads a decision rests on go to the leader: a follower may
 * lag, and a refusal must be decided on the stream's latest revision. After a
 * leader change the old leader answers NotLeader and the client reconnects
 * (to the new leader when the connection string uses esdb+discover://).
 */
const LEADER = { requiresLeader: true } as const;

/** The metadata settings that make EventStoreDB hide or scavenge a stream's events. */
export interface TruncatingSettings {
  $maxCount?: number;
  $maxAge?: number;
  $tb?: number | string;
}

/** The settings of a stream's metadata that truncate it, or undefined when it keeps every event ($cacheControl and ACLs are harmless). */
export function truncatingSettings(metadata: StreamMetadata | undefined): TruncatingSettings | undefined {
  if (!metadata) return undefined;
  const found: TruncatingSettings = {};
  if (metadata.maxCount !== undefined && metadata.maxCount !== null) found.$maxCount = metadata.maxCount;
  if (metadata.maxAge !== undefined && metadata.maxAge !== null) found.$maxAge = metadata.maxAge;
  const tb = metadata.truncateBefore;
  // $tb 0 (or START) hides nothing.
  if (tb !== undefined && tb !== null && tb !== 0 && tb !== ESDB_START) found.$tb = typeof tb === 'number' ? tb : String(tb);
  return Object.keys(found).length > 0 ? found : undefined;
}

/** A ledger stream whose metadata lets EventStoreDB drop events: deciding or auditing on what is left would be wrong. */
export class TruncatingStreamError extends Error {
  constructor(
    readonly streamId: string,
    readonly settings: TruncatingSettings,
    /** The first revision left, when events before it are gone already. */
    readonly firstKept?: StreamRevision,
  ) {
    const named = settingsText(settings);
    const gone = firstKept === undefined ? '' : `its events before revision ${firstKept} are gone`;
    super(
      named
        ? `EventStoreDB stream ${streamId} has truncating metadata (${named})${gone && `, and ${gone}`}: a ledger stream must keep every event. ` +
            `Remove these settings from its metadata ($$${streamId}); ` +
            'if a scavenge has run since they were set, events are lost: restore the stream from a backup'
        : `EventStoreDB stream ${streamId}: ${gone}: a ledger stream must keep every event. Restore the stream from a backup`,
    );
    this.name = 'TruncatingStreamError';
  }

  /** "$maxCount: 100, $tb: 3": the settings as an operator finds them in the stream's metadata. */
  get settingsText(): string {
    return settingsText(this.settings);
  }
}

function settingsText(settings: TruncatingSettings): string {
  return Object.entries(settings)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(', ');
}

/** A read that took longer than its deadline; classified as an outage (isEventStoreUnavailable). */
export class EsdbReadDeadlineError extends Error {
  readonly type = 'deadline-exceeded';

  constructor(what: string, ms: number) {
    super(`EventStoreDB: ${what} got no complete answer within ${ms} ms`);
    this.name = 'EsdbReadDeadlineError';
  }
}

/** The EventStoreDB adapter: a straight mapping of the port onto @eventstore/db-client. */
export class EsdbEventStore implements EventStore {
  private readonly subscriptions = new Set<Subscription>();
  private readonly settings: EsdbSettings;

  constructor(
    private readonly client: EsdbClient,
    settings: Partial<EsdbSettings> = {},
  ) {
    this.settings = { ...DEFAULT_SETTINGS, ...settings };
  }

  static fromConnectionString(cs: string, settings: Partial<EsdbSettings> = {}): EsdbEventStore {
    return new EsdbEventStore(EventStoreDBClient.connectionString(cs), settings);
  }

  /** The name of a stream on the server. */
  private onServer(streamId: string): string {
    return this.settings.streamPrefix + streamId;
  }

  /** Our event with the name the service knows its stream by, or undefined for a stream of another prefix, a system event or another writer's. */
  private readonly ours = (raw: EsdbRecordedEvent): RecordedEvent | undefined => {
    const prefix = this.settings.streamPrefix;
    if (!raw.streamId.startsWith(prefix)) return undefined;
    const event = toRecorded(raw);
    return event && prefix ? { ...event, streamId: event.streamId.slice(prefix.length) } : event;
  };

  async append(streamId: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const expectedRevision = expected === NO_STREAM ? ESDB_NO_STREAM : expected === ANY ? ESDB_ANY : expected;
    const data = events.map((e) => jsonEvent({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata }));
    try {
      // Appends carry the client's own deadline (defaultDeadline, 10 s): a timed-out append may still have landed,
      // and its retry goes through the expected revision.
      const result = await this.client.appendToStream(this.onServer(streamId), data, { expectedRevision, ...LEADER });
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

  /**
   * A read from revision 0 is a whole history that a decision or an audit
   * rests on: one that does not start at revision 0 lost its first events
   * (a stream's $maxCount, $maxAge or $tb, and a scavenge) and is refused
   * (TruncatingStreamError), its metadata read then to name the settings.
   * A whole stream costs no read beyond its own.
   */
  async readStream(streamId: string, fromRevision: StreamRevision = 0n, maxCount?: number): Promise<RecordedEvent[]> {
    const events = await this.readEvents(streamId, fromRevision, maxCount);
    if (fromRevision === 0n && events.length > 0 && events[0].revision !== 0n) {
      throw new TruncatingStreamError(this.onServer(streamId), (await this.truncatingSettingsOf(streamId)) ?? {}, events[0].revision);
    }
    return events;
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

  async readEventsAt(keys: readonly EventKey[]): Promise<(ReplayedEvent | undefined)[]> {
    const out: (ReplayedEvent | undefined)[] = [];
    for (let i = 0; i < keys.length; i += 16) {
      const reads = keys.slice(i, i + 16).map(async ({ streamId, revision }) => (await this.readEvents(streamId, revision, 1))[0]);
      out.push(...(await Promise.all(reads)).map((event, j) => (event?.revision === keys[i + j].revision ? event : undefined)));
    }
    return out;
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
      const read = this.client.readAll({ fromPosition: toReadPosition(from), direction: FORWARDS, maxCount: pageSize });
      await this.withinDeadline(read, `reading $all after ${from.commit}/${from.prepare}`, (resolved) => {
        seen++;
        const raw = resolved.event;
        if (!raw || comparePositions(raw.position, from) <= 0) return;
        from = raw.position;
        const event = this.ours(raw);
        if (event && out.length < maxCount) out.push(event);
      });
      if (seen < pageSize) break;
    }
    return out;
  }

  /**
   * Batches of up to maxBatchSize, as they arrive (see subscribeInBatches).
   * The subscription may follow any node the client is connected to; what it
   * delivers is in $all's order whichever node sends it.
   */
  subscribeToAll(options: SubscriptionOptions): Subscription {
    const subscription = subscribeInBatches({
      ...options,
      backoff: this.settings.backoff,
      open: (after) => this.client.subscribeToAll({ fromPosition: toReadPosition(after), filter: this.subscriptionFilter() }),
      toRecorded: this.ours,
    });
    const handle: Subscription = {
      stop: async () => {
        await subscription.stop();
        this.subscriptions.delete(handle);
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  /** System streams' names start with $, so a prefix (which may not) leaves them out as well. */
  private subscriptionFilter() {
    const prefix = this.settings.streamPrefix;
    return prefix ? streamNameFilter({ prefixes: [prefix] }) : excludeSystemEvents();
  }

  /** The streams among these whose metadata truncates them (events lost or not yet), with the settings that do; read 16 at a time. */
  async truncatedStreams(streamIds: readonly string[]): Promise<TruncatingStreamError[]> {
    const found: TruncatingStreamError[] = [];
    for (let i = 0; i < streamIds.length; i += 16) {
      const batch = streamIds.slice(i, i + 16);
      const settings = await Promise.all(batch.map((id) => this.truncatingSettingsOf(id)));
      // Named as on the server, where its metadata is to be mended.
      settings.forEach((s, j) => s && found.push(new TruncatingStreamError(this.onServer(batch[j]), s)));
    }
    return found;
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.client.dispose();
  }

  private async readEvents(streamId: string, fromRevision: StreamRevision, maxCount: number | undefined): Promise<RecordedEvent[]> {
    const out: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(this.onServer(streamId), { fromRevision, direction: FORWARDS, maxCount, ...LEADER });
      await this.withinDeadline(read, `reading ${this.onServer(streamId)}`, (resolved) => {
        const event = resolved.event && this.ours(resolved.event);
        if (event) out.push(event);
      });
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return out;
  }

  private async truncatingSettingsOf(streamId: string): Promise<TruncatingSettings | undefined> {
    const name = this.onServer(streamId);
    const { metadata } = await this.withinDeadlineOf(this.client.getStreamMetadata(name, LEADER), `reading the metadata of ${name}`);
    return truncatingSettings(metadata);
  }

  /** Reads a streaming read to its end, cancelling it and failing with EsdbReadDeadlineError past the read deadline. */
  private async withinDeadline<T>(read: AsyncIterable<T> & { cancel(): Promise<void> }, what: string, each: (item: T) => void): Promise<void> {
    const ms = this.settings.readDeadlineMs;
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      read.cancel().catch(() => undefined);
    }, ms);
    try {
      for await (const item of read) {
        if (late) break;
        each(item);
      }
    } catch (error) {
      if (!late) throw error;
    } finally {
      clearTimeout(timer);
    }
    // A cancelled read may end quietly: what it returned is not the whole answer.
    if (late) throw new EsdbReadDeadlineError(what, ms);
  }

  private async withinDeadlineOf<T>(promise: Promise<T>, what: string): Promise<T> {
    const ms = this.settings.readDeadlineMs;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new EsdbReadDeadlineError(what, ms)), ms)));
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
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
