import { EventStore, GlobalPosition, RecordedEvent, START } from '../../src/ledger/ports/event-store.port';

/**
 * The position of the last event once the log has stopped growing. readAll
 * already waits for events held behind a transaction still open; one empty
 * read is still not the end while commands are settling, so read again after
 * a pause.
 */
export async function lastPosition(store: EventStore): Promise<GlobalPosition> {
  return (await readSettledLog(store)).position;
}

export async function readSettledLog(store: EventStore): Promise<{ events: RecordedEvent[]; position: GlobalPosition }> {
  const events: RecordedEvent[] = [];
  let position = START;
  for (let quietReads = 0; quietReads < 3;) {
    const batch = await store.readAll(position, 5000);
    if (batch.length === 0) {
      quietReads++;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    quietReads = 0;
    events.push(...batch);
    position = batch[batch.length - 1].position;
  }
  return { events, position };
}
