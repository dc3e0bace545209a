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
  // test/global-setup.js also says so at the top of every run.
  describe('EventStoreDB adapter', () => {
    it.skip('contract suite skipped: set EVENTSTORE_CONNECTION_STRING (docker compose up eventstore) to run it', () => undefined);
  });
}
