import { EsdbEventStore } from '../../src/infrastructure/event-store/esdb-event-store';
import { eventStoreContract } from './event-store.contract';

const connectionString = process.env.EVENTSTORE_CONNECTION_STRING;

if (connectionString) {
  // The suite uses fresh random stream names, so closing the client is all the cleanup there is.
  eventStoreContract('EventStoreDB', async () => {
    const store = EsdbEventStore.fromConnectionString(connectionString);
    return { store, teardown: () => store.close() };
  });
} else {
  // Said out loud so that a green run does not pass for an EventStoreDB run.
  console.log(
    'EventStoreDB contract suite skipped: EVENTSTORE_CONNECTION_STRING is not set ' +
      '(docker compose up -d eventstore, then EVENTSTORE_CONNECTION_STRING=esdb://localhost:2113?tls=false npm test)',
  );
  describe('EventStoreDB adapter', () => {
    it.skip('contract suite skipped: set EVENTSTORE_CONNECTION_STRING (docker compose up eventstore) to run it', () => undefined);
  });
}
