import { Pool } from 'pg';
import { AppConfig } from '../../config/config';
import { EventStore } from '../../ledger/ports/event-store.port';
import { EsdbEventStore } from './esdb-event-store';
import { PostgresEventStore } from './postgres-event-store';

export type EventStoreConfig = Pick<AppConfig, 'eventStore' | 'eventStoreConnectionString' | 'database' | 'eventStorePollIntervalMs'>;

/** The event store the configuration names; the Postgres one keeps its events in `pool`'s database. */
export function createEventStore(config: EventStoreConfig, pool: Pool): EventStore {
  return config.eventStore === 'esdb'
    ? EsdbEventStore.fromConnectionString(config.eventStoreConnectionString!)
    : new PostgresEventStore(pool, { connection: config.database, pollIntervalMs: config.eventStorePollIntervalMs });
}
