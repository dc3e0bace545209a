import { Projection } from '../../projections/projection';
import { InProcessProjectionRunner, projectionMigrations } from '../../projections/projection-runner';
import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { eventStoreMigrations } from '../../src/infrastructure/event-store/postgres-event-store.migrations';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { encodeEvent } from '../../src/ledger/event-codec';
import { ANY } from '../../src/ledger/ports/event-store.port';
import { orderStream } from '../../src/ledger/streams';
import { at } from '../support/order-lives';
import { lastPosition } from '../support/settled-log';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/** A read model that keeps every event it is handed, to count what the runner applied. */
const seenEvents: Projection<'seen_events'> = {
  name: 'seen-events',
  tables: ['seen_events'],
  migrations: [{ id: 'projections/seen-events/001-tables', sql: (t) => `create table ${t.seen_events} (event_id uuid primary key)` }],
  apply: (event, t) => [{ text: `insert into ${t.seen_events} (event_id) values ($1)`, values: [event.recorded.id] }],
};

/**
 * The runner applies an event after a quiet spell at once, and then reads
 * again only after its batch gap: under load, what arrives meanwhile goes in
 * one batch. A backlog is read in full batches back to back.
 */
describe('projection runner: batches under load', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  let n = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, [...eventStoreMigrations, ...projectionMigrations([seenEvents])]);
    store = new PostgresEventStore(db.pool, { connection: db.config, pollIntervalMs: 60_000 });
  });
  afterAll(async () => {
    await store.close();
    await db.drop();
  });

  const append = (count: number) =>
    store.appendAtomically(
      Array.from({ length: count }, () => {
        const orderNo = `gap-${++n}`;
        return { streamId: orderStream(orderNo), events: [encodeEvent({ type: 'OrderAccepted', data: { attempt: 1, at: at(1) } })], expected: ANY };
      }),
    );

  /** A runner over the log from its start, and the batches it applied: when, and how many events. */
  async function runner(gapMs: number) {
    const batches: { at: number; events: number }[] = [];
    const running = new InProcessProjectionRunner(db.pool, store, [seenEvents], undefined, gapMs);
    running.onApplied(({ count }) => batches.push({ at: Date.now(), events: count }));
    await running.start();
    const applied = async (total: number) => {
      const deadline = Date.now() + 15_000;
      while (batches.reduce((sum, b) => sum + b.events, 0) < total && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return batches;
    };
    return { batches, applied, stop: () => running.stop() };
  }

  it('applies the first event at once, and what follows during the gap in one batch after it', async () => {
    // A gap long enough that "at once" stays well below it on a machine busy with other suites.
    const { applied, stop } = await runner(1000);
    try {
      const sent = Date.now();
      await append(1);
      const [first] = await applied(1);
      expect(first.at - sent).toBeLessThan(700);
      for (let i = 0; i < 3; i++) await append(1);
      const batches = await applied(4);
      expect(batches.map((b) => b.events)).toEqual([1, 3]);
      expect(batches[1].at - first.at).toBeGreaterThanOrEqual(990);
    } finally {
      await stop();
    }
  });

  it('reads a backlog in full batches back to back, and waits only after a short one', async () => {
    await db.pool.query('truncate seen_events; delete from projection_checkpoints');
    // Counted in the table: readAll stops below any transaction still open on the server, another suite's too.
    const logged = Number((await db.pool.query('select count(*) from es_events')).rows[0].count);
    await append(1_200 - logged);
    // Then until nothing of it is held back by an older transaction still open on the server, for the runner to find all of it at once.
    await lastPosition(store);
    const { applied, stop } = await runner(3_000);
    try {
      const batches = await applied(1_200);
      expect(batches.map((b) => b.events)).toEqual([500, 500, 200]);
      // No gap after a full batch: the three came one after another.
      expect(batches[2].at - batches[0].at).toBeLessThan(2_900);
      expect(Number((await db.pool.query('select count(*) from seen_events')).rows[0].count)).toBe(1_200);
    } finally {
      await stop();
    }
  });
});
