import { randomUUID } from 'node:crypto';
import { Pool, PoolClient, PoolConfig } from 'pg';
import { Migration } from '../postgres/migrations';
import { ChangeNotifier, WakeUp } from './change-notifier';
import {
  ANY,
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  GlobalPosition,
  JsonObject,
  NO_STREAM,
  RecordedEvent,
  StreamRevision,
  Subscription,
  SubscriptionOptions,
  WrongExpectedRevisionError,
} from './event-store.port';

export const eventStoreMigrations: readonly Migration[] = [
  {
    id: 'event-store/001-events',
    sql: `
      create table es_events (
        stream_id       text        not null,
        stream_revision bigint      not null,
        -- Global order is (transaction_id, global_position): see readAll.
        transaction_id  xid8        not null default pg_current_xact_id(),
        global_position bigint      generated always as identity,
        event_id        uuid        not null,
        event_type      text        not null,
        data            jsonb       not null,
        metadata        jsonb       not null default '{}',
        created_at      timestamptz not null default now(),
        primary key (stream_id, stream_revision)
      );
      create unique index es_events_global_order on es_events (transaction_id, global_position);
      create function es_events_notify() returns trigger language plpgsql as $$
        begin perform pg_notify('es_events', ''); return null; end $$;
      create trigger es_events_notify after insert on es_events
        for each statement execute function es_events_notify();
      -- The log is append-only: refuse edits even from the service's own role.
      create function es_events_immutable() returns trigger language plpgsql as $$
        begin raise exception 'es_events is append-only'; end $$;
      create trigger es_events_immutable before update or delete on es_events
        for each row execute function es_events_immutable();
    `,
  },
];

interface EventRow {
  stream_id: string;
  stream_revision: string;
  transaction_id: string;
  global_position: string;
  event_id: string;
  event_type: string;
  data: JsonObject;
  metadata: JsonObject;
  /** Milliseconds since the epoch. */
  created_ms: string;
}

// Columns are cast to text for exact bigints; ORDER BY and WHERE must therefore
// name the table's columns (e.*), not these same-named text outputs. The time
// comes as whole milliseconds (what a Date holds): parsing a timestamp's text
// was a noticeable share of replaying a long stream.
const SELECT_EVENT = `select e.stream_id, e.stream_revision::text, e.transaction_id::text, e.global_position::text,
  e.event_id::text, e.event_type, e.data, e.metadata, floor(extract(epoch from e.created_at) * 1000)::bigint::text as created_ms from es_events e`;

const INSERT_EVENTS = `
  insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
  select $1, $2::bigint + e.ord - 1, (e.ev->>'id')::uuid, e.ev->>'type', e.ev->'data', e.ev->'metadata'
  from jsonb_array_elements($3::jsonb) with ordinality as e(ev, ord)
  -- An exact expected revision must exist, or the append would leave a gap.
  where $4::bigint is null or exists (select 1 from es_events where stream_id = $1 and stream_revision = $4::bigint)
  order by e.ord
  returning transaction_id::text, global_position::text, stream_revision::text`;

const UNIQUE_VIOLATION = '23505';
const ANY_RETRIES = 20;

export interface PostgresEventStoreOptions {
  /** Settings for the dedicated LISTEN connection. */
  readonly connection: PoolConfig;
  /** Fallback poll when no notification arrives. */
  readonly pollIntervalMs?: number;
}

export class PostgresEventStore implements EventStore {
  private readonly notifier: ChangeNotifier;
  private readonly pollIntervalMs: number;
  private readonly subscriptions = new Set<Subscription>();

  constructor(
    private readonly pool: Pool,
    options: PostgresEventStoreOptions,
  ) {
    this.notifier = new ChangeNotifier(options.connection, 'es_events');
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  async append(streamId: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const payload = JSON.stringify(
      events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata ?? {} })),
    );
    // A checked-out client is released without the error: pool.query() would
    // destroy the connection after every conflict.
    const client = await this.pool.connect();
    try {
      if (expected !== ANY) return await this.insert(client, streamId, payload, expected);
      for (let attempt = 0; ; attempt++) {
        const last = await this.lastRevision(client, streamId);
        try {
          return await this.insert(client, streamId, payload, last === undefined ? NO_STREAM : last);
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || attempt >= ANY_RETRIES) throw error;
        }
      }
    } finally {
      client.release();
    }
  }

  private async insert(client: PoolClient, streamId: string, payload: string, expected: typeof NO_STREAM | StreamRevision) {
    const first = expected === NO_STREAM ? 0n : expected + 1n;
    const required = expected === NO_STREAM ? null : expected.toString();
    let rows: { transaction_id: string; global_position: string; stream_revision: string }[];
    try {
      ({ rows } = await client.query(INSERT_EVENTS, [streamId, first.toString(), payload, required]));
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new WrongExpectedRevisionError(streamId, expected);
      throw error;
    }
    if (rows.length === 0) throw new WrongExpectedRevisionError(streamId, expected);
    const last = rows.reduce((a, b) => (BigInt(a.stream_revision) > BigInt(b.stream_revision) ? a : b));
    return {
      nextExpectedRevision: BigInt(last.stream_revision),
      position: { commit: BigInt(last.transaction_id), prepare: BigInt(last.global_position) },
    };
  }

  private async lastRevision(client: PoolClient, streamId: string): Promise<StreamRevision | undefined> {
    const { rows } = await client.query<{ last: string | null }>(
      'select max(stream_revision)::text as last from es_events where stream_id = $1',
      [streamId],
    );
    return rows[0].last === null ? undefined : BigInt(rows[0].last);
  }

  async readStream(streamId: string, fromRevision: StreamRevision = 0n, maxCount?: number): Promise<RecordedEvent[]> {
    const from = fromRevision.toString();
    // Revisions have no gaps, so a slice is a closed range of them: the planner then
    // walks the index for that range instead of sorting the rest of a long stream.
    const { rows } =
      maxCount === undefined
        ? await this.pool.query<EventRow>(`${SELECT_EVENT} where e.stream_id = $1 and e.stream_revision >= $2 order by e.stream_revision`, [streamId, from])
        : await this.pool.query<EventRow>(
            `${SELECT_EVENT} where e.stream_id = $1 and e.stream_revision >= $2 and e.stream_revision < $2::bigint + $3 order by e.stream_revision`,
            [streamId, from, maxCount],
          );
    return rows.map(toRecordedEvent);
  }

  /** One query for many streams: far fewer round trips than a read per stream. */
  async readStreams(streamIds: readonly string[]): Promise<RecordedEvent[][]> {
    const byStream = new Map<string, RecordedEvent[]>(streamIds.map((id) => [id, []]));
    if (streamIds.length === 0) return [];
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT} where e.stream_id = any($1::text[]) order by e.stream_id, e.stream_revision`,
      [streamIds],
    );
    for (const row of rows) byStream.get(row.stream_id)!.push(toRecordedEvent(row));
    return streamIds.map((id) => byStream.get(id)!);
  }

  /**
   * Transaction ids are handed out before commit, so a later position can
   * commit first. Reading only below the oldest transaction still running
   * (pg_snapshot_xmin) means no event can ever appear behind a reader.
   */
  async readAll(after: GlobalPosition, maxCount: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(
      `${SELECT_EVENT}
       where (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
         and e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
       order by e.transaction_id, e.global_position
       limit $3`,
      [clampToZero(after.commit), clampToZero(after.prepare), maxCount],
    );
    return rows.map(toRecordedEvent);
  }

  subscribeToAll(options: SubscriptionOptions): Subscription {
    const subscription = new PollingSubscription(this, this.notifier, options, this.pollIntervalMs);
    this.subscriptions.add(subscription);
    return {
      stop: async () => {
        this.subscriptions.delete(subscription);
        await subscription.stop();
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    this.subscriptions.clear();
    await this.notifier.close();
  }
}

class PollingSubscription implements Subscription {
  private stopped = false;
  private readonly wake: WakeUp;
  private readonly done: Promise<void>;

  constructor(
    private readonly store: PostgresEventStore,
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
      let events: RecordedEvent[];
      try {
        events = await this.store.readAll(after, maxBatch);
        if (events.length > 0 && !this.stopped) await this.options.onEvents(events);
        failures = 0;
      } catch (error) {
        this.options.onError?.(error);
        await this.wake.wait(Math.min(100 * 2 ** ++failures, 5000));
        continue;
      }
      if (events.length > 0) {
        after = events[events.length - 1].position;
        backoff = 0;
        continue;
      }
      // A notification can come before its events are readable (an older
      // transaction is still open): re-read soon, backing off to the poll interval.
      if (backoff > 0) backoff = Math.min(backoff * 2, this.pollIntervalMs);
      const notified = await this.wake.wait(backoff || this.pollIntervalMs);
      if (notified && backoff === 0) backoff = 1;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake.interrupt();
    await this.done;
  }
}

function clampToZero(value: bigint): string {
  return (value < 0n ? 0n : value).toString();
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: BigInt(row.stream_revision),
    position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
    type: row.event_type,
    data: row.data,
    metadata: row.metadata,
    createdAt: new Date(Number(row.created_ms)),
  };
}
