import { randomUUID } from 'node:crypto';
import { Pool, PoolConfig } from 'pg';
import { StatementBatcher } from '../postgres/statement-batcher';
import { Migration } from '../postgres/migrations';
import { ChangeNotifier, WakeUp } from './change-notifier';
import {
  ANY,
  AppendOptions,
  AppendResult,
  CheckedEvent,
  comparePositions,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  GlobalPosition,
  JsonObject,
  LoadedEvent,
  NO_STREAM,
  RecordedEvent,
  ReplayedEvent,
  StreamAppend,
  StreamRevision,
  Subscription,
  SubscriptionOptions,
  WrongExpectedRevisionError,
} from '../../ledger/ports/event-store.port';

/**
 * The first grouped append (migration 002), kept as it was applied: see
 * APPEND_FUNCTION for the current one.
 *
 * Appends to many streams in one statement and one commit. Each stream keeps
 * its own expected-revision check and its own conflict: a stream's advisory
 * lock (held to the commit) makes its check and insert atomic against every
 * other appender, so a conflict is an answer, not an error that would abort
 * the others. Locks are taken in one global order, so two batches never wait
 * for each other in a cycle; the same stream twice in a batch is appended in
 * the order given. Expected: a revision, 'no_stream' or 'any'.
 */
const APPEND_FUNCTION_002 = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql as $fn$
  declare
    entry record;
    last_rev bigint;
    wanted text;
  begin
    for entry in
      select e.value as v, (e.ordinality - 1)::int as i
      from jsonb_array_elements(batch) with ordinality e
      order by hashtextextended(e.value->>'s', 0), e.ordinality
    loop
      perform pg_advisory_xact_lock(hashtextextended(entry.v->>'s', 0));
      select max(stream_revision) into last_rev from es_events where stream_id = entry.v->>'s';
      wanted := entry.v->>'x';
      o_item := entry.i;
      o_actual := last_rev;
      if (wanted = 'no_stream' and last_rev is not null)
         or (wanted not in ('no_stream', 'any') and last_rev is distinct from wanted::bigint) then
        o_appended := false; o_commit := null; o_position := null; o_revision := null;
        return next;
        continue;
      end if;
      with inserted as (
        insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
        select entry.v->>'s', coalesce(last_rev, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
               ev.value->'data', coalesce(ev.value->'metadata', '{}')
        from jsonb_array_elements(entry.v->'ev') with ordinality ev
        returning global_position, stream_revision
      )
      select max(inserted.global_position), max(inserted.stream_revision) into o_position, o_revision from inserted;
      o_appended := true;
      o_commit := pg_current_xact_id()::text;
      return next;
    end loop;
  end $fn$;`;

/** Every stream append of the batch (m), in its item (e): an item is one append or a group ({g: [...]}). */
const BATCH_MEMBERS = `jsonb_array_elements(batch) with ordinality e,
           jsonb_array_elements(case when e.value ? 'g' then e.value->'g' else jsonb_build_array(e.value) end) with ordinality m`;

/** Every stream of the batch locked (held to the commit), in one global order so that two batches never wait for each other in a cycle. */
const LOCK_STREAMS = `
    for lock_key in
      select distinct hashtextextended(m.value->>'s', 0)
      from ${BATCH_MEMBERS}
      order by 1
    loop
      perform pg_advisory_xact_lock(lock_key);
    end loop;`;

/** Item by item, member by member: a stream that appears twice sees the events its earlier item appended. */
const APPEND_ONE_BY_ONE = `
    for entry in select e.value as v, (e.ordinality - 1)::int as i from jsonb_array_elements(batch) with ordinality e order by e.ordinality
    loop
      members := case when entry.v ? 'g' then entry.v->'g' else jsonb_build_array(entry.v) end;
      actual := '{}';
      fits := true;
      for member in select m.value as v from jsonb_array_elements(members) with ordinality m order by m.ordinality
      loop
        select max(stream_revision) into last_rev from es_events where stream_id = member.v->>'s';
        actual := array_append(actual, last_rev);
        wanted := member.v->>'x';
        if (wanted = 'no_stream' and last_rev is not null)
           or (wanted not in ('no_stream', 'any') and last_rev is distinct from wanted::bigint) then
          fits := false;
        end if;
      end loop;
      for member in select m.value as v, m.ordinality::int as j from jsonb_array_elements(members) with ordinality m order by m.ordinality
      loop
        o_item := entry.i;
        o_member := member.j - 1;
        o_actual := actual[member.j];
        if fits then
          with inserted as (
            insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
            select member.v->>'s', coalesce(o_actual, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
                   ev.value->'data', coalesce(ev.value->'metadata', '{}')
            from jsonb_array_elements(member.v->'ev') with ordinality ev
            returning global_position, stream_revision
          )
          select max(inserted.global_position), max(inserted.stream_revision) into o_position, o_revision from inserted;
          o_appended := true;
          o_commit := pg_current_xact_id()::text;
        else
          o_appended := false; o_commit := null; o_position := null; o_revision := null;
        end if;
        return next;
      end loop;
    end loop;`;

const APPEND_DECLARATIONS = `
    lock_key bigint;
    entry record;
    member record;
    members jsonb;
    actual bigint[];
    last_rev bigint;
    wanted text;
    fits boolean;`;

/**
 * Appends to many streams in one statement and one commit. Each item is one
 * stream's append ({s, x, ev}) or a group of them ({g: [...]}) that commits
 * all or nothing. Every stream keeps its own expected-revision check (x: a
 * revision, 'no_stream' or 'any') and its own conflict: a conflict is an
 * answer for its item, not an error that would abort the others. The
 * streams' advisory locks (held to the commit) make each check and insert
 * atomic against every other appender; they are all taken first, in one
 * global order, so two batches never wait for each other in a cycle. Items
 * are appended in the order given.
 */
const APPEND_FUNCTION_003 = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_member int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql as $fn$
  declare ${APPEND_DECLARATIONS}
  begin ${LOCK_STREAMS} ${APPEND_ONE_BY_ONE}
  end $fn$;`;

/**
 * The same answers as APPEND_FUNCTION_003, in three statements whatever the
 * batch when its streams are all different (the usual batch: a wallet has
 * one append in flight per instance, an order one step): one reads every
 * stream's revision, one inserts every event of the items whose checks all
 * pass, in item, member and event order. A batch naming a stream twice is
 * appended item by item as before. Two statements per stream, each started
 * and ended by plpgsql, were most of the function's time. JIT is off: the
 * planner takes jsonb_array_elements for 100 rows a call, and the costs of
 * the nested calls passed jit_above_cost (40 ms of compiling per call).
 */
const APPEND_FUNCTION = `
  create function es_append(batch jsonb)
  returns table (o_item int, o_member int, o_appended boolean, o_actual bigint, o_commit text, o_position bigint, o_revision bigint)
  language plpgsql set jit = off as $fn$
  declare ${APPEND_DECLARATIONS}
    distinct_streams boolean;
  begin ${LOCK_STREAMS}
    select count(*) = count(distinct m.value->>'s') into distinct_streams from ${BATCH_MEMBERS};
    if distinct_streams then
      return query
        with asked as (
          select (e.ordinality - 1)::int as i, (m.ordinality - 1)::int as j, m.value->>'s' as s, m.value->>'x' as x, m.value->'ev' as ev
          from ${BATCH_MEMBERS}
        ),
        checked as (
          select asked.*, last.rev,
                 not ((asked.x = 'no_stream' and last.rev is not null)
                      or (asked.x not in ('no_stream', 'any') and last.rev is distinct from asked.x::bigint)) as ok
          from asked cross join lateral (select max(stream_revision) as rev from es_events where stream_id = asked.s) last
        ),
        decided as (select checked.*, bool_and(checked.ok) over (partition by checked.i) as fits from checked),
        inserted as (
          insert into es_events (stream_id, stream_revision, event_id, event_type, data, metadata)
          select d.s, coalesce(d.rev, -1) + ev.ordinality, (ev.value->>'id')::uuid, ev.value->>'type',
                 ev.value->'data', coalesce(ev.value->'metadata', '{}')
          from decided d cross join lateral jsonb_array_elements(d.ev) with ordinality ev
          where d.fits
          order by d.i, d.j, ev.ordinality
          returning stream_id, global_position, stream_revision
        ),
        landed as (select stream_id, max(global_position) as p, max(stream_revision) as r from inserted group by stream_id)
        select d.i, d.j, d.fits, d.rev, case when d.fits then pg_current_xact_id()::text end, landed.p, landed.r
        from decided d left join landed on landed.stream_id = d.s
        order by d.i, d.j;
      return;
    end if; ${APPEND_ONE_BY_ONE}
  end $fn$;`;

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
  {
    id: 'event-store/002-grouped-appends',
    sql: `
      -- NOTIFY in the appending transaction takes a global lock at commit and
      -- serialises every append; subscribers are woken after the commit instead.
      drop trigger es_events_notify on es_events;
      drop function es_events_notify();
      ${APPEND_FUNCTION_002}
    `,
  },
  {
    id: 'event-store/003-atomic-groups',
    sql: `
      -- A group of appends to several streams commits all or nothing: an order
      -- and its wallet movement are one append.
      drop function es_append(jsonb);
      ${APPEND_FUNCTION_003}
    `,
  },
  {
    id: 'event-store/004-set-wise-appends',
    sql: `
      drop function es_append(jsonb);
      ${APPEND_FUNCTION}
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
const EVENT_COLUMNS = `e.stream_id, e.stream_revision::text, e.transaction_id::text, e.global_position::text,
  e.event_id::text, e.event_type, e.data, e.metadata, floor(extract(epoch from e.created_at) * 1000)::bigint::text as created_ms`;
const SELECT_EVENT = `select ${EVENT_COLUMNS} from es_events e`;
const SELECT_EVENT_HELD = (held: boolean) => `select ${EVENT_COLUMNS}, ${held} as held from es_events e`;
/**
 * What a replay reads (ReplayedEvent): no event id, no stream id (it is the
 * one asked for), and of the metadata only its chain links. Decoding each
 * row's metadata object and id was a large share of replaying a long stream.
 */
const REPLAY_COLUMNS = `e.stream_revision::text, e.transaction_id::text, e.global_position::text, e.event_type, e.data,
  e.metadata->'hash' as hash, e.metadata->'prev_hash' as prev_hash, floor(extract(epoch from e.created_at) * 1000)::bigint::text as created_ms`;
/** What a check reads (CheckedEvent): a replay's columns without the links and the time. */
const CHECK_COLUMNS = `e.stream_revision::text, e.transaction_id::text, e.global_position::text, e.event_type, e.data`;
/**
 * What the wallet writer's load reads (LoadedEvent): no position, time or
 * previous link. Reading a wallet of 100,000 events with these took about
 * two thirds of the time with a replay's.
 */
const LOAD_COLUMNS = `e.stream_revision::text, e.event_type, e.data, e.metadata->'hash' as hash`;
/**
 * Revisions have no gaps, so a slice is a closed range of them: the planner
 * then walks the index for that range instead of sorting the rest of a long
 * stream. The limit (the range's own length) keeps the walk in index order:
 * without it, a range the statistics take for tens of thousands of rows (low
 * revisions: most streams are short) was read by a bitmap scan and a sort,
 * once with two parallel workers.
 */
const IN_SLICE = 'where e.stream_id = $1 and e.stream_revision >= $2 and e.stream_revision < $2::bigint + $3 order by e.stream_revision limit $3';

export interface PostgresEventStoreOptions {
  /** Settings for the dedicated LISTEN connection. */
  readonly connection: PoolConfig;
  /** Fallback poll when no notification arrives. */
  readonly pollIntervalMs?: number;
  /** Appends per statement at most. */
  readonly maxAppendBatch?: number;
  /** Append statements running at once at most (each on its own connection). */
  readonly appendsInFlight?: number;
}

interface PendingAppend {
  /** The streams in the order of the append's members. */
  members: readonly { streamId: string; expected: ExpectedRevision }[];
  /** The append as es_append takes it: {s, x, ev}, or {g: [...]} for a group. */
  json: string;
}

interface StreamRead {
  streamId: string;
  fromRevision: StreamRevision;
}

interface AppendRow {
  o_item: number;
  o_member: number;
  o_appended: boolean;
  o_actual: string | null;
  o_commit: string | null;
  o_position: string | null;
  o_revision: string | null;
}

/** Prepared once per connection, like the other fixed statements every order runs: parsing and planning them at each call cost Postgres about 0.1 ms of CPU per order. */
const APPEND = 'select o_item, o_member, o_appended, o_actual::text, o_commit, o_position::text, o_revision::text from es_append($1::jsonb)';

export class PostgresEventStore implements EventStore {
  private readonly notifier: ChangeNotifier;
  private readonly pollIntervalMs: number;
  private readonly subscriptions = new Set<Subscription>();
  /** Concurrent appends, to any streams, share a statement and a commit. */
  private readonly appends: StatementBatcher<PendingAppend, AppendResult[]>;
  /**
   * Appends a reply waits on (AppendOptions.replyWaits) group in statements of
   * their own, so a submit never queues behind the flushes of fulfilment's
   * and settlement's appends. At 818 orders a second end to end on a 2-core
   * VM a submit's mean time in the service went from 35.0 to 32.9 ms
   * (medians of eight alternated pairs; the runs vary more than that).
   */
  private readonly replyAppends: StatementBatcher<PendingAppend, AppendResult[]>;
  private readonly streamReads = new StatementBatcher<StreamRead, RecordedEvent[]>((batch) => this.readBatchedStreams(batch), {
    maxBatch: 200,
    maxInFlight: 4,
  });

  constructor(
    private readonly pool: Pool,
    options: PostgresEventStoreOptions,
  ) {
    this.notifier = new ChangeNotifier(options.connection, 'es_events');
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    const batching = { maxBatch: options.maxAppendBatch ?? 500, maxInFlight: options.appendsInFlight ?? 2, isolateFailures: true };
    this.appends = new StatementBatcher((batch) => this.flush(batch), batching);
    this.replyAppends = new StatementBatcher((batch) => this.flush(batch), batching);
  }

  async append(streamId: string, events: readonly EventToAppend[], expected: ExpectedRevision): Promise<AppendResult> {
    if (events.length === 0) throw new RangeError('append needs at least one event');
    const [result] = await this.appends.run({ members: [{ streamId, expected }], json: appendJson({ streamId, events, expected }) });
    return result;
  }

  async appendAtomically(appends: readonly StreamAppend[], options: AppendOptions = {}): Promise<AppendResult[]> {
    if (appends.length === 0 || appends.some((a) => a.events.length === 0)) throw new RangeError('append needs at least one event per stream');
    if (new Set(appends.map((a) => a.streamId)).size !== appends.length) throw new RangeError('a stream may appear once in an atomic append');
    return (options.replyWaits ? this.replyAppends : this.appends).run({
      members: appends.map(({ streamId, expected }) => ({ streamId, expected })),
      json: `{"g":[${appends.map(appendJson).join(',')}]}`,
    });
  }

  /** One statement for the whole batch (a bad payload fails only its own append: see isolateFailures). */
  private async flush(batch: readonly PendingAppend[]): Promise<(AppendResult[] | Error)[]> {
    const { rows } = await this.pool.query<AppendRow>({ name: 'es-append', text: APPEND, values: [`[${batch.map((a) => a.json).join(',')}]`] });
    const answers: (AppendRow | undefined)[][] = batch.map((append) => append.members.map(() => undefined));
    for (const row of rows) answers[row.o_item][row.o_member] = row;
    if (rows.some((row) => row.o_appended)) this.notifier.announce();
    return batch.map((append, item) => appendOutcome(append, answers[item]));
  }

  readStream(streamId: string, fromRevision: StreamRevision = 0n, maxCount?: number): Promise<RecordedEvent[]> {
    if (maxCount !== undefined) return this.readSlice(streamId, fromRevision, maxCount);
    return this.streamReads.run({ streamId, fromRevision });
  }

  /**
   * Concurrent reads of streams (an aggregate's load before each command)
   * share one statement. Each stream is read by its own walk of the primary
   * key: as a plain join, a planner whose statistics lag a growing table (a
   * new database, a burst of new streams) took each stream for thousands of
   * events and scanned the whole table for every batch.
   */
  private async readBatchedStreams(batch: readonly StreamRead[]): Promise<RecordedEvent[][]> {
    const { rows } = await this.pool.query<EventRow & { item: number }>({
      name: 'es-read-streams',
      text: `select r.item::int - 1 as item, e.*
       from unnest($1::text[], $2::bigint[]) with ordinality as r(stream_id, from_revision, item)
       cross join lateral (
         -- The order by keeps this a subquery of its own (never flattened into a join), run per stream.
         select ${EVENT_COLUMNS} from es_events e
         where e.stream_id = r.stream_id and e.stream_revision >= r.from_revision
         order by e.stream_revision) e
       order by r.item, e.stream_revision::bigint`,
      values: [batch.map((read) => read.streamId), batch.map((read) => read.fromRevision.toString())],
    });
    const events: RecordedEvent[][] = batch.map(() => []);
    for (const row of rows) events[row.item].push(toRecordedEvent(row));
    return events;
  }

  /** A bounded slice of a long stream (auditors' tools), read alone. */
  private async readSlice(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<RecordedEvent[]> {
    const { rows } = await this.pool.query<EventRow>(`${SELECT_EVENT} ${IN_SLICE}`, [streamId, fromRevision.toString(), maxCount]);
    return rows.map(toRecordedEvent);
  }

  async readStreamForReplay(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<ReplayedEvent[]> {
    const rows = await this.sliceRows<ReplayRow>('es-replay-slice', REPLAY_COLUMNS, streamId, fromRevision, maxCount);
    return rows.map(([revision, commit, prepare, type, data, hash, prevHash, createdMs]) => ({
      streamId,
      revision: BigInt(revision),
      position: { commit: BigInt(commit), prepare: BigInt(prepare) },
      type,
      data,
      metadata: chainLinks(hash, prevHash),
      createdAt: new Date(Number(createdMs)),
    }));
  }

  async readStreamForCheck(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<CheckedEvent[]> {
    const rows = await this.sliceRows<CheckRow>('es-check-slice', CHECK_COLUMNS, streamId, fromRevision, maxCount);
    return rows.map(([revision, commit, prepare, type, data]) => ({
      streamId,
      revision: BigInt(revision),
      position: { commit: BigInt(commit), prepare: BigInt(prepare) },
      type,
      data,
    }));
  }

  async readStreamForLoad(streamId: string, fromRevision: StreamRevision, maxCount: number): Promise<LoadedEvent[]> {
    const rows = await this.sliceRows<LoadRow>('es-load-slice', LOAD_COLUMNS, streamId, fromRevision, maxCount);
    return rows.map(([revision, type, data, hash]) => ({ streamId, revision: BigInt(revision), type, data, metadata: hash === null ? {} : { hash } }));
  }

  /**
   * A slice's `columns` as array rows, under a prepared statement's `name`:
   * pg builds each object row by copying a template, a large share of a long
   * replay's reading.
   */
  private async sliceRows<Row extends unknown[]>(
    name: string,
    columns: string,
    streamId: string,
    fromRevision: StreamRevision,
    maxCount: number,
  ): Promise<Row[]> {
    const { rows } = await this.pool.query<Row>({
      name,
      text: `select ${columns} from es_events e ${IN_SLICE}`,
      values: [streamId, fromRevision.toString(), maxCount],
      rowMode: 'array',
    });
    return rows;
  }

  /** One query for many streams: far fewer round trips than a read per stream. */
  async readStreams(streamIds: readonly string[]): Promise<RecordedEvent[][]> {
    if (streamIds.length === 0) return [];
    return this.readBatchedStreams(streamIds.map((streamId) => ({ streamId, fromRevision: 0n })));
  }

  /**
   * Transaction ids are handed out before commit, so a later position can
   * commit first. Reading only below the oldest transaction still running
   * (pg_snapshot_xmin) means no event can ever appear behind a reader.
   */
  async readAll(after: GlobalPosition, maxCount: number): Promise<RecordedEvent[]> {
    return (await this.readForSubscription(after, maxCount)).events;
  }

  /**
   * Up to maxCount events after `after` in global order, and what lies
   * beyond them (readAll keeps only the events). 'more': more events are readable now. 'held': events are
   * committed behind a transaction still running anywhere on the server,
   * readable once it ends, which may announce nothing. 'none': nothing yet; an
   * append from now on announces itself.
   */
  async readForSubscription(after: GlobalPosition, maxCount: number): Promise<{ events: RecordedEvent[]; beyond: 'more' | 'held' | 'none' }> {
    // Planned at each call, never prepared: only the position read tells the
    // planner that few rows lie beyond it.
    // The second part asks whether anything lies at or above the horizon,
    // where only transactions still running (a few rows at most) can be. It
    // starts its index scan at the horizon, and checks the position row by
    // row: given as a row comparison, the position would be the scan's start
    // instead, and a reader far behind (catching up, rebuilding) would walk
    // the index from there to the end at every read. Without the order, a
    // planner that expects many rows beyond (statistics older than the log)
    // scanned the whole table for its `limit 1`.
    const { rows } = await this.pool.query<EventRow & { held: boolean }>(
      `(${SELECT_EVENT_HELD(false)}
         where (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
           and e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
         order by e.transaction_id, e.global_position
         limit $3)
       union all
       (${SELECT_EVENT_HELD(true)}
         where e.transaction_id >= pg_snapshot_xmin(pg_current_snapshot())
           and (e.transaction_id > $1::xid8 or (e.transaction_id = $1::xid8 and e.global_position > $2::bigint))
         order by e.transaction_id, e.global_position
         limit 1)`,
      [clampToZero(after.commit), clampToZero(after.prepare), maxCount + 1],
    );
    // Each part comes in its own order; the union's is not promised.
    const events = rows
      .filter((row) => !row.held)
      .map(toRecordedEvent)
      .sort((a, b) => comparePositions(a.position, b.position));
    if (events.length > maxCount) return { events: events.slice(0, maxCount), beyond: 'more' };
    return { events, beyond: rows.some((row) => row.held) ? 'held' : 'none' };
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
      let read: Awaited<ReturnType<PostgresEventStore['readForSubscription']>>;
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

function appendJson({ streamId, events, expected }: StreamAppend): string {
  return JSON.stringify({
    s: streamId,
    x: typeof expected === 'bigint' ? expected.toString() : expected,
    ev: events.map((e) => ({ id: e.id ?? randomUUID(), type: e.type, data: e.data, metadata: e.metadata ?? {} })),
  });
}

/** An append's results, one per stream, or the conflict that kept the whole append out. */
function appendOutcome(append: PendingAppend, rows: readonly (AppendRow | undefined)[]): AppendResult[] | Error {
  const results: AppendResult[] = [];
  for (const [member, { streamId, expected }] of append.members.entries()) {
    const row = rows[member];
    if (!row) return new Error(`no answer for the append to ${streamId}`);
    if (row.o_appended) {
      results.push({ nextExpectedRevision: BigInt(row.o_revision!), position: { commit: BigInt(row.o_commit!), prepare: BigInt(row.o_position!) } });
      continue;
    }
    const actual = row.o_actual === null ? NO_STREAM : BigInt(row.o_actual);
    const conflicts = expected === ANY ? false : expected === NO_STREAM ? actual !== NO_STREAM : actual !== expected;
    // A group that failed on another member: this member's own check passed.
    if (conflicts || append.members.length === 1) return new WrongExpectedRevisionError(streamId, expected, actual);
  }
  if (results.length === append.members.length) return results;
  return new Error('an atomic append was refused without a conflict');
}

function clampToZero(value: bigint): string {
  return (value < 0n ? 0n : value).toString();
}

/**
 * REPLAY_COLUMNS in order: revision, transaction id, position, type, data,
 * then the metadata's hash and prev_hash as JSON values (SQL null when the
 * metadata has no such entry), then created_ms.
 */
type ReplayRow = [string, string, string, string, Record<string, unknown>, unknown, unknown, string];

/** CHECK_COLUMNS in order: revision, transaction id, position, type, data. */
type CheckRow = [string, string, string, string, Record<string, unknown>];

/** LOAD_COLUMNS in order: revision, type, data, the event's own hash. */
type LoadRow = [string, string, Record<string, unknown>, unknown];

function chainLinks(hash: unknown, prev_hash: unknown): ReplayedEvent['metadata'] {
  if (hash === null) return prev_hash === null ? {} : { prev_hash };
  return prev_hash === null ? { hash } : { hash, prev_hash };
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
