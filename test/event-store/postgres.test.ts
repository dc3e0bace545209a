import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { eventStoreMigrations } from '../../src/infrastructure/event-store/postgres-event-store.migrations';
import { ANY, NO_STREAM, RecordedEvent, START, WrongExpectedRevisionError } from '../../src/ledger/ports/event-store.port';
import { lastPosition } from '../support/settled-log';
import { PlanTestDatabase, planTestDatabase } from '../support/table-scans';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { eventStoreContract } from './event-store.contract';

eventStoreContract('PostgreSQL', async () => {
  const db = await createTestDatabase();
  await migrate(db.pool, eventStoreMigrations);
  const store = new PostgresEventStore(db.pool, { connection: db.config, pollIntervalMs: 500 });
  return {
    store,
    async teardown() {
      await store.close();
      await db.drop();
    },
  };
});

describe('PostgreSQL event store specifics', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, eventStoreMigrations);
    store = new PostgresEventStore(db.pool, { connection: db.config, pollIntervalMs: 200 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  /** A subscriber from the end of the log, on a store of its own (another instance) polling every 60 s, with what it was handed. */
  async function subscriberAtEnd(pool: Pool = db.pool) {
    const own = new PostgresEventStore(pool, { connection: db.config, pollIntervalMs: 60_000 });
    // Not readAll's last: a suite running beside this one can hold the log's newest events back.
    const before = await lastPosition(store);
    const seen: RecordedEvent[] = [];
    const subscription = own.subscribeToAll({ after: before, onEvents: async (events) => void seen.push(...events) });
    return {
      store: own,
      seen,
      stop: async () => {
        await subscription.stop();
        await own.close();
      },
    };
  }

  it('does not let a subscriber pass an event whose transaction commits after a later one', async () => {
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: START, onEvents: async (events) => void seen.push(...events) });

    // The early transaction takes its id first but commits last.
    const early = new Client(db.config);
    await early.connect();
    await early.query('begin');
    await early.query(`insert into es_events (stream_id, stream_revision, event_id, event_type, data) values ('early-1', 0, gen_random_uuid(), 'Early', '{}')`);
    await store.append('late-1', [{ type: 'Late', data: {} }], NO_STREAM);
    await new Promise((r) => setTimeout(r, 600));
    expect(seen.map((e) => e.type)).toEqual([]);

    await early.query('commit');
    await early.end();
    for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    await subscription.stop();
    expect(seen.map((e) => e.type)).toEqual(['Early', 'Late']);
  });

  it('refuses to update or delete a recorded event', async () => {
    await store.append('immutable-1', [{ type: 'Fixed', data: { amount: '100' } }], NO_STREAM);
    await expect(db.pool.query(`update es_events set data = '{"amount":"1"}' where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
    await expect(db.pool.query(`delete from es_events where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
  });

  it('keeps its connections through conflicts instead of reconnecting', async () => {
    await store.append('conflicts-1', [{ type: 'A', data: {} }], NO_STREAM);
    let connects = 0;
    db.pool.on('connect', () => connects++);
    const attempts = await Promise.allSettled(Array.from({ length: 100 }, () => store.append('conflicts-1', [{ type: 'B', data: {} }], NO_STREAM)));
    expect(attempts.every((a) => a.status === 'rejected')).toBe(true);
    // The pool holds at most 30: a connection dropped per conflict would mean ~100 connects.
    expect(connects).toBeLessThanOrEqual(30);
    const { rows } = await db.pool.query('select count(*)::int as n from es_events where stream_id = $1', ['conflicts-1']);
    expect(rows[0].n).toBe(1);
  });

  it('appends sent together keep their own outcomes: a conflict or a bad payload fails only its own append', async () => {
    await store.append('grouped-taken', [{ type: 'A', data: {} }], NO_STREAM);
    // Sent in one turn of the event loop: they share statements (es_append), as concurrent commands do.
    const appends = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => store.append(`grouped-new-${i}`, [{ type: 'A', data: { i } }], NO_STREAM)),
      store.append('grouped-taken', [{ type: 'B', data: {} }], NO_STREAM),
      store.append('grouped-taken', [{ type: 'B', data: {} }], 5n),
      // Postgres refuses \u0000 in jsonb: the statement of this batch fails, and each append is tried alone.
      store.append('grouped-bad', [{ type: 'A', data: { text: 'nul \u0000 here' } }], NO_STREAM),
      store.append('grouped-taken', [{ type: 'B', data: {} }], 0n),
    ]);
    expect(appends.map((a) => a.status)).toEqual([...Array(10).fill('fulfilled'), 'rejected', 'rejected', 'rejected', 'fulfilled']);
    expect((appends[10] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect((appends[11] as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect((appends[12] as PromiseRejectedResult).reason).not.toBeInstanceOf(WrongExpectedRevisionError);
    const { rows } = await db.pool.query(
      `select stream_id, count(*)::int as n from es_events where stream_id like 'grouped-%' group by stream_id order by stream_id`,
    );
    expect(rows).toEqual([
      ...Array.from({ length: 10 }, (_, i) => ({ stream_id: `grouped-new-${i}`, n: 1 })).sort((a, b) => a.stream_id.localeCompare(b.stream_id)),
      { stream_id: 'grouped-taken', n: 2 },
    ]);
  });

  it("lets an append a reply waits on pass the others' statements in flight, and gives it the same answers", async () => {
    // Another session holds the lock es_append takes on stream lane-held: both of the
    // store's statements in flight for ordinary appends wait on it, and a third waits for them.
    const holder = new Client(db.config);
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select pg_advisory_xact_lock(hashtextextended('lane-held', 0))`);
      const settled: string[] = [];
      const track = (name: string, append: Promise<unknown>) => append.then(() => void settled.push(name));
      const pause = () => new Promise((resolve) => setTimeout(resolve, 150));
      // Sent in different turns of the event loop, so that each is a statement of its own.
      const held: Promise<void>[] = [];
      for (const i of [1, 2]) {
        held.push(track(`held-${i}`, store.appendAtomically([{ streamId: 'lane-held', events: [{ type: 'A', data: { i } }], expected: ANY }])));
        await pause();
      }
      const queued = track('queued', store.appendAtomically([{ streamId: 'lane-queued', events: [{ type: 'A', data: {} }], expected: NO_STREAM }]));
      const reply = store.appendAtomically(
        [
          { streamId: 'lane-order', events: [{ type: 'OrderPlaced', data: {} }], expected: NO_STREAM },
          { streamId: 'lane-wallet', events: [{ type: 'FundsFrozen', data: {} }], expected: NO_STREAM },
        ],
        { replyWaits: true },
      );
      // Queued behind the held statements it would wait as long as the lock is held.
      const answered = await Promise.race([reply, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 3000))]);
      expect(answered === 'still waiting' ? answered : answered.map((r) => r.nextExpectedRevision)).toEqual([0n, 0n]);
      expect(settled).toEqual([]);
      // Its own conflicts are answered as on the other path.
      await expect(
        store.appendAtomically([{ streamId: 'lane-order', events: [{ type: 'OrderPlaced', data: {} }], expected: NO_STREAM }], { replyWaits: true }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await holder.query('commit');
      await Promise.all([...held, queued]);
      expect(settled.sort()).toEqual(['held-1', 'held-2', 'queued']);
    } finally {
      await holder.end();
    }
  });

  /** One item of an es_append batch, as the store sends it. */
  const appendItem = (streamId: string, x: string, ...types: string[]) => ({
    s: streamId,
    x,
    ev: types.map((type, i) => ({ id: randomUUID(), type, data: { i } })),
  });

  /**
   * On streams named `${prefix}-*` (seeded here): appends that land, a stale
   * revision, a stream taken, a group with a stale member, a group that lands.
   */
  const mixedBatch = async (prefix: string) => {
    for (const s of ['at-0', 'stale', 'taken', 'group-stale', 'pair-any']) await store.append(`${prefix}-${s}`, [{ type: 'Seed', data: {} }], NO_STREAM);
    const append = (s: string, x: string, ...types: string[]) => appendItem(`${prefix}-${s}`, x, ...types);
    return [
      append('new', 'no_stream', 'A', 'B', 'C'),
      append('at-0', '0', 'B'),
      append('stale', '5', 'B'),
      append('taken', 'no_stream', 'B'),
      { g: [append('group-new', 'no_stream', 'A'), append('group-stale', '3', 'B')] },
      { g: [append('pair-new', 'no_stream', 'A'), append('pair-any', 'any', 'B', 'C')] },
    ];
  };

  it('answers each append of a batch on its own: conflicts, groups all or nothing, a stream twice in the batch in the order given', async () => {
    // es_append called as the store calls it, on streams named batch-*.
    const { rows: answers } = await db.pool.query('select o_item, o_member, o_appended, o_actual::text, o_revision::text from es_append($1::jsonb)', [
      JSON.stringify([...(await mixedBatch('batch')), appendItem('batch-new', '2', 'D'), appendItem('batch-new', '2', 'E')]),
    ]);
    const { rows: events } = await db.pool.query<{ stream: string; revision: string; event_type: string }>(
      `select substr(stream_id, 7) as stream, stream_revision::text as revision, event_type
       from es_events where stream_id like 'batch-%' and event_type <> 'Seed' order by global_position`,
    );

    expect(answers).toEqual([
      { o_item: 0, o_member: 0, o_appended: true, o_actual: null, o_revision: '2' },
      { o_item: 1, o_member: 0, o_appended: true, o_actual: '0', o_revision: '1' },
      { o_item: 2, o_member: 0, o_appended: false, o_actual: '0', o_revision: null },
      { o_item: 3, o_member: 0, o_appended: false, o_actual: '0', o_revision: null },
      { o_item: 4, o_member: 0, o_appended: false, o_actual: null, o_revision: null },
      { o_item: 4, o_member: 1, o_appended: false, o_actual: '0', o_revision: null },
      { o_item: 5, o_member: 0, o_appended: true, o_actual: null, o_revision: '0' },
      { o_item: 5, o_member: 1, o_appended: true, o_actual: '0', o_revision: '2' },
      // A stream twice: the first finds it as this batch left it, the second conflicts with the first.
      { o_item: 6, o_member: 0, o_appended: true, o_actual: '2', o_revision: '3' },
      { o_item: 7, o_member: 0, o_appended: false, o_actual: '3', o_revision: null },
    ]);
    expect(events.map((e) => [e.stream, e.revision, e.event_type])).toEqual([
      ['new', '0', 'A'],
      ['new', '1', 'B'],
      ['new', '2', 'C'],
      ['at-0', '1', 'B'],
      ['pair-new', '0', 'A'],
      ['pair-any', '1', 'B'],
      ['pair-any', '2', 'C'],
      ['new', '3', 'D'],
    ]);
  });

  it('answers a batch of different streams (appended set-wise) as it answers the same batch item by item', async () => {
    const run = async (prefix: string, items: unknown[]) => {
      const { rows } = await db.pool.query<{ o_item: number; o_commit: string | null; o_position: string | null }>(
        'select o_item, o_member, o_appended, o_actual::text, o_commit, o_position::text, o_revision::text from es_append($1::jsonb)',
        [JSON.stringify(items)],
      );
      // The events of the mixed batch: the item-by-item run's extra append is left out.
      const { rows: events } = await db.pool.query<{ stream: string; revision: string; event_type: string; global_position: string }>(
        `select substr(stream_id, length($1) + 2) as stream, stream_revision::text as revision, event_type, global_position::text
         from es_events where stream_id like $1 || '-%' and event_type not in ('Seed', 'Z') order by global_position`,
        [prefix],
      );
      return { rows, events };
    };
    // The same items, then one more on a stream already in the batch: that batch goes item by item.
    const setWise = await run('setwise', await mixedBatch('setwise'));
    const oneByOne = await run('onebyone', [...(await mixedBatch('onebyone')), appendItem('onebyone-new', 'any', 'Z')]);

    const answers = (rows: typeof setWise.rows) =>
      rows.filter((row) => row.o_item < 6).map(({ o_position, o_commit, ...answer }) => ({ ...answer, landed: o_position !== null && o_commit !== null }));
    expect(answers(setWise.rows)).toEqual(answers(oneByOne.rows));
    expect(setWise.rows.filter((row) => row.o_position !== null)).toHaveLength(4);
    const withoutPositions = (events: typeof setWise.events) => events.map(({ global_position, ...event }) => event);
    expect(withoutPositions(setWise.events)).toEqual(withoutPositions(oneByOne.events));
    // Each appended stream's answer names its last event's position, in one transaction.
    const last = new Map(setWise.events.map((event) => [event.stream, event.global_position]));
    const appended = setWise.rows.filter((row) => row.o_position !== null);
    expect(appended.map((row) => row.o_position).sort()).toEqual([...last.values()].sort());
    expect(new Set(appended.map((row) => row.o_commit)).size).toBe(1);
  });

  it('reads once per append once a subscriber has caught up, not again to find nothing', async () => {
    // The subscription's reads (the only statements that look at the snapshot's xmin) that found events,
    // and those that found nothing; a read that found only events held behind a transaction still open is neither.
    const reads = { events: 0, nothing: 0 };
    let counting = false;
    const classify = (result: { rows: { held?: boolean }[] }) => {
      if (!counting) return;
      if (result.rows.some((row) => row.held === false)) reads.events += 1;
      else if (result.rows.length === 0) reads.nothing += 1;
    };
    let settled = false;
    const counted = new Proxy(db.pool, {
      get(target, key) {
        const value = Reflect.get(target, key) as unknown;
        if (key !== 'query') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (text: unknown, ...rest: unknown[]) => {
          const result = await (target.query as (...a: unknown[]) => Promise<{ rows: { held?: boolean }[] }>)(text, ...rest);
          if (typeof text === 'string' && text.includes('pg_snapshot_xmin')) {
            settled = true;
            classify(result);
          }
          return result;
        };
      },
    });
    const subscriber = await subscriberAtEnd(counted);
    const { seen } = subscriber;
    try {
      const until = async (done: () => boolean) => {
        for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      // Settled: its first read done, and the one its LISTEN connection asks for once connected.
      await until(() => settled);
      await new Promise((r) => setTimeout(r, 500));
      counting = true;
      for (let i = 1; i <= 5; i++) {
        await subscriber.store.append(`caught-up-${i}`, [{ type: 'A', data: {} }], NO_STREAM);
        await until(() => seen.length === i);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(seen.map((e) => e.streamId)).toEqual([1, 2, 3, 4, 5].map((i) => `caught-up-${i}`));
      // One read found each append; a short read is all there was. (Reading again at once made five reads
      // that found nothing.) Reads of an event held behind a transaction still open, in any database of
      // the server (the horizon is the server's), are not counted against it: other suites run beside this one.
      expect(reads.events).toBe(5);
      expect(reads.nothing).toBeLessThan(3);
    } finally {
      await subscriber.stop();
    }
  });

  it('soon reads events that were held behind an open transaction, even one whose end announces nothing', async () => {
    const subscriber = await subscriberAtEnd();
    const { seen } = subscriber;
    const open = new Client(db.config);
    await open.connect();
    try {
      await new Promise((r) => setTimeout(r, 500));
      // Committed by another writer, unannounced: readable, but nobody said so.
      await db.pool.query(`insert into es_events (stream_id, stream_revision, event_id, event_type, data) values ('held-0', 0, gen_random_uuid(), 'E', '{}')`);
      // A transaction that takes an id and writes no event: its end announces nothing.
      await db.pool.query('create table if not exists held_elsewhere (n int)');
      await open.query('begin');
      await open.query('insert into held_elsewhere values (1)');
      // The announced append commits behind it: the wake-up's read finds held-0 and holds back held-1.
      await subscriber.store.append('held-1', [{ type: 'E', data: {} }], NO_STREAM);
      const until = async (done: () => boolean, ms: number) => {
        for (const started = Date.now(); !done() && Date.now() - started < ms;) await new Promise((r) => setTimeout(r, 10));
      };
      await until(() => seen.length >= 1, 2_000);
      expect(seen.map((e) => e.streamId)).toEqual(['held-0']);
      await open.query('commit');
      const committed = Date.now();
      await until(() => seen.length >= 2, 10_000);
      expect(seen.map((e) => e.streamId)).toEqual(['held-0', 'held-1']);
      // Re-read within the back-off, not at the 60 s poll (with room for a machine busy with other suites).
      expect(Date.now() - committed).toBeLessThan(5_000);
    } finally {
      await open.end();
      await subscriber.stop();
    }
  });

  it('reads to the end: readAll waits for committed events held behind a transaction still running; upToHorizon does not', async () => {
    const from = await lastPosition(store);
    const open = new Client(db.config);
    await open.connect();
    try {
      await db.pool.query('create table if not exists held_elsewhere (n int)');
      // An older transaction that has taken an id, then an event committed behind it.
      await open.query('begin');
      await open.query('insert into held_elsewhere values (1)');
      await store.append('behind-open-1', [{ type: 'E', data: {} }], NO_STREAM);
      expect(await store.readAll(from, 100, { upToHorizon: true })).toEqual([]);
      const read = store.readAll(from, 100);
      let settled = false;
      void read.then(() => (settled = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      await open.query('commit');
      expect((await read).map((e) => e.streamId)).toEqual(['behind-open-1']);
    } finally {
      await open.end();
    }
  });

  it("wakes another instance's subscriber after an append, long before its poll", async () => {
    const subscriber = await subscriberAtEnd();
    const { seen } = subscriber;
    try {
      // Caught up after its first read, the subscription waits for its 60 s poll:
      // a wake-up within 5 s can only be the announcement.
      await new Promise((r) => setTimeout(r, 5_000));
      const started = Date.now();
      await store.append('announced-1', [{ type: 'A', data: {} }], NO_STREAM);
      while (!seen.some((e) => e.streamId === 'announced-1') && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 10));
      expect(seen.map((e) => e.streamId)).toContain('announced-1');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await subscriber.stop();
    }
  });
});

/**
 * A command's aggregate load reads its stream in a batch with other
 * concurrent loads. The planner must walk the primary key for each stream
 * even when the table's statistics describe an older, different table: a
 * database analyzed while it held a few long streams (wallets), then filled
 * with many short ones (orders) faster than autovacuum re-analyzes it.
 * Planned as a join, such a batch scanned the whole table.
 */
describe('PostgreSQL event store: batched stream reads under stale statistics', () => {
  let planned: PlanTestDatabase;
  let db: TestDatabase;
  /** One connection, so the statistics it reports are the batch's own. */
  let reader: Pool;
  let store: PostgresEventStore;

  beforeAll(async () => {
    planned = await planTestDatabase(eventStoreMigrations, ['es_events']);
    ({ db, connection: reader } = planned);
    const insertStreams = (prefix: string, streams: number, events: number) =>
      db.pool.query(
        `insert into es_events (stream_id, stream_revision, event_id, event_type, data)
         select $1 || s, r, gen_random_uuid(), 'Seeded', jsonb_build_object('n', r) from generate_series(1, $2::int) s, generate_series(0, $3::int - 1) r`,
        [prefix, streams, events],
      );
    await insertStreams('wallet-', 50, 500);
    await db.pool.query('analyze es_events');
    await insertStreams('order-', 5000, 7);
    store = new PostgresEventStore(reader, { connection: db.config, pollIntervalMs: 60_000 });
  });
  afterAll(async () => {
    await store.close();
    await planned.close();
  });

  /** es_events' scans so far, the reader's own published. */
  const scans = async () => (await planned.scans()).es_events;

  it('reads each stream of a batch through the primary key, in revision order', async () => {
    const before = await scans();
    const ids = Array.from({ length: 40 }, (_, i) => `order-${i * 97 + 1}`);

    const streams = await store.readStreams(ids);

    expect(streams.map((events) => events.map((e) => Number(e.revision)))).toEqual(ids.map(() => [0, 1, 2, 3, 4, 5, 6]));
    expect(streams.map((events) => events[0].streamId)).toEqual(ids);
    const after = await scans();
    // The index scans prove the reader's counts were published; the batch then scanned no table.
    expect(after.idx).toBeGreaterThan(before.idx);
    expect(after.seq - before.seq).toBe(0);
  });

  it("reads a subscription's next events by the global order's index alone, far behind or caught up", async () => {
    // Far behind: the first ten events of 60,000, and whether anything is held beyond them.
    let before = await scans();
    const first = await store.readForSubscription(START, 10);
    const farBehind = (await scans()).blocks - before.blocks;

    const { rows } = await db.pool.query<{ c: string; p: string }>(
      `select transaction_id::text as c, global_position::text as p from es_events
       order by transaction_id desc, global_position desc offset 5 limit 1`,
    );
    before = await scans();
    const last = await store.readForSubscription({ commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) }, 10);
    const caughtUp = (await scans()).blocks - before.blocks;

    expect(first.events).toHaveLength(10);
    expect(first.beyond).toBe('more');
    expect(last.events).toHaveLength(5);
    expect(last.beyond).toBe('none');
    // A scan of the table or of the index from the position on touches hundreds of blocks.
    expect(farBehind).toBeLessThan(30);
    expect(caughtUp).toBeLessThan(30);
  });
});
