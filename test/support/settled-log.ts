import { PostgresEventStore } from '../../src/infrastructure/event-store/postgres-event-store';
import { MeteredEventStore } from '../../src/infrastructure/metrics/metered-event-store';
import { EventStore, GlobalPosition, RecordedEvent, START } from '../../src/ledger/ports/event-store.port';

/**
 * The position of the last event once the log has stopped growing. readAll
 * stops below the oldest open write transaction (a projection batch, say),
 * so one empty read is not yet the end: read again after a pause.
 */
export async function lastPosition(store: EventStore): Promise<GlobalPosition> {
  return (await readSettledLog(store)).position;
}

export async function readSettledLog(store: EventStore): Promise<{ events: RecordedEvent[]; position: GlobalPosition }> {
  const events: RecordedEvent[] = [];
  let position = START;
  for (let quietReads = 0; quietReads < 3;) {
    const { events: batch, held } = await readNext(store, position);
    if (batch.length === 0) {
      // Committed events held behind a transaction still open are not the end, however long it stays open.
      if (!held) quietReads++;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    quietReads = 0;
    events.push(...batch);
    position = batch[batch.length - 1].position;
  }
  return { events, position };
}

/**
 * The next events, and whether the Postgres store holds committed ones back.
 * Its horizon is the server's oldest open transaction, in any database: a
 * suite running beside this one can hold the log's newest events back.
 */
async function readNext(store: EventStore, after: GlobalPosition): Promise<{ events: RecordedEvent[]; held: boolean }> {
  const measured = store instanceof MeteredEventStore ? store.inner : store;
  if (!(measured instanceof PostgresEventStore)) return { events: await store.readAll(after, 5000), held: false };
  const { events, beyond } = await measured.readForSubscription(after, 5000);
  return { events, held: beyond === 'held' };
}
