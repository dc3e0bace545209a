import { Pool } from 'pg';
import { AppConfig } from '../../config/config';
import { EventStore } from '../../ledger/ports/event-store.port';
import { PostgresEventStore } from './postgres-event-store';

export type EventStoreConfig = Pick<
  AppConfig,
  'eventStore' | 'eventStoreConnectionString' | 'database' | 'eventStorePollIntervalMs' | 'eventStoreStreamPrefix'
>;

/**
 * The event store the configuration names; the Postgres one keeps its events in `pool`'s database.
 * EventStoreDB's client (gRPC and protobuf, about 0.15 s of a process's or thread's start) is loaded only when named.
 */
export async function createEventStore(config: EventStoreConfig, pool: Pool): Promise<EventStore> {
  if (config.eventStore !== 'esdb') return new PostgresEventStore(pool, { connection: config.database, pollIntervalMs: config.eventStorePollIntervalMs });
  const { EsdbEventStore } = await import('./esdb-event-store');
  return EsdbEventStore.fromConnectionString(config.eventStoreConnectionString!, { streamPrefix: config.eventStoreStreamPrefix });
}
