import { Client } from 'pg';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { eventStoreMigrations, PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { NO_STREAM, RecordedEvent, START } from '../../src/infrastructure/event-store/event-store.port';
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

  it('does not let a subscriber pass an event whose transaction commits after a later one', async () => {
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: START, onEvents: async (events) => void seen.push(...events) });

    // The early transaction takes its id first but commits last.
    const early = new Client(db.config);
    await early.connect();
    await early.query('begin');
    await early.query(
      `insert into es_events (stream_id, stream_revision, event_id, event_type, data) values ('early-1', 0, gen_random_uuid(), 'Early', '{}')`,
    );
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
    await expect(db.pool.query(`update es_events set data = '{"amount":"1"}' where stream_id = 'immutable-1'`)).rejects.toThrow(
      /append-only/,
    );
    await expect(db.pool.query(`delete from es_events where stream_id = 'immutable-1'`)).rejects.toThrow(/append-only/);
  });

  it('keeps its connections through conflicts instead of reconnecting', async () => {
    await store.append('conflicts-1', [{ type: 'A', data: {} }], NO_STREAM);
    let connects = 0;
    db.pool.on('connect', () => connects++);
    const attempts = await Promise.allSettled(
      Array.from({ length: 100 }, () => store.append('conflicts-1', [{ type: 'B', data: {} }], NO_STREAM)),
    );
    expect(attempts.every((a) => a.status === 'rejected')).toBe(true);
    // The pool holds at most 30: a connection dropped per conflict would mean ~100 connects.
    expect(connects).toBeLessThanOrEqual(30);
    const { rows } = await db.pool.query('select count(*)::int as n from es_events where stream_id = $1', ['conflicts-1']);
    expect(rows[0].n).toBe(1);
  });
});
