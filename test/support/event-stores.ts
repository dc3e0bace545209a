import { createTestDatabase, TestDatabase } from './test-database';

/** An event store the end-to-end suites run on. */
export interface StoreUnderTest {
  readonly name: 'PostgreSQL' | 'EventStoreDB';
  /** Why its variant does not run here; undefined when it does. */
  readonly skipped?: string;
  /** Appends to several streams in one transaction (see `appendAtomically`): EventStoreDB 6.x goes one stream at a time. */
  readonly appendsAtomically: boolean;
  /**
   * A fresh database for a suite, as createTestDatabase makes, whose `env`
   * runs the service (and the CLI) on this store: on EventStoreDB with a
   * stream prefix of the database's own, so its log holds its own streams
   * only, as the database's `es_events` would (docs/testing.md).
   */
  createDatabase(prefix?: string): Promise<TestDatabase>;
}

const POSTGRES: StoreUnderTest = {
  name: 'PostgreSQL',
  appendsAtomically: true,
  createDatabase: (prefix) => createTestDatabase(prefix),
};

function eventStoreDb(connectionString: string | undefined): StoreUnderTest {
  return {
    name: 'EventStoreDB',
    skipped: connectionString
      ? undefined
      : "EVENTSTORE_CONNECTION_STRING is not set (docker compose up -d eventstore; EVENTSTORE_CONNECTION_STRING='esdb://localhost:2113?tls=false' npm test)",
    appendsAtomically: false,
    async createDatabase(prefix) {
      if (!connectionString) throw new Error('EVENTSTORE_CONNECTION_STRING is not set');
      const db = await createTestDatabase(prefix);
      // The database's name is random: its streams are this suite's alone, however many suites share the server.
      const env = { ...db.env, EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: connectionString, EVENTSTORE_STREAM_PREFIX: `${db.name}/` };
      return { ...db, env };
    },
  };
}

/** PostgreSQL always; EventStoreDB too, skipped unless EVENTSTORE_CONNECTION_STRING is set. */
export function storesUnderTest(): StoreUnderTest[] {
  return [POSTGRES, eventStoreDb(process.env.EVENTSTORE_CONNECTION_STRING)];
}

/**
 * The suite once per store, its title naming the store. A store that cannot
 * run here gets one skipped test saying why (test/global-setup.js says so
 * once at the top of the run too).
 */
export function describeEachStore(title: string, body: (store: StoreUnderTest) => void): void {
  for (const store of storesUnderTest()) {
    describe(`${title}, on ${store.name}`, () => {
      if (store.skipped) it.skip(`not run here: ${store.skipped}`, () => undefined);
      else body(store);
    });
  }
}
