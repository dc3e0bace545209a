import { Pool, PoolClient } from 'pg';
import { AppConfig } from '../../config/config';
import { StartupError } from '../../shared/startup-error';
import { migrate, Migration } from '../postgres/migrations';

/**
 * Which event store this database's read models follow (event_store_binding,
 * one row). A position means something in one store only: a Postgres
 * position is (transaction id, sequence), an EventStoreDB one its
 * (commit, prepare) offsets in its log. A checkpoint or a read model written
 * from one store, resumed on the other, would skip or apply again events
 * without a word. So the first start records the store, and every start
 * after, and every CLI command, refuses the other store before connecting to it.
 */

export type EventStoreKind = AppConfig['eventStore'];

export const eventStoreBindingMigrations: readonly Migration[] = [
  {
    id: 'event-store-binding/001-binding',
    sql: `create table event_store_binding (
    only_row    boolean     primary key default true check (only_row),
    store       text        not null check (store in ('postgres', 'esdb')),
    recorded_at timestamptz not null default now()
  )`,
  },
];

const NAMES: Record<EventStoreKind, string> = { postgres: 'PostgreSQL (EVENT_STORE=postgres)', esdb: 'EventStoreDB (EVENT_STORE=esdb)' };

/** Refused: the database's read models follow the other store. */
export function bindingMismatch(recorded: EventStoreKind, configured: EventStoreKind, since: Date): string {
  return (
    `EVENT_STORE=${configured}, but this database's read models and projection checkpoints follow ${NAMES[recorded]}, ` +
    `recorded at its first start (${since.toISOString()}). Positions of one store mean nothing in the other, so they are never resumed. ` +
    `Point DATABASE_URL at a fresh database to run on ${NAMES[configured]}, or set EVENT_STORE=${recorded} again. ` +
    'The read models cannot be rebuilt in place from the other store: a fresh database rebuilds them from the log at its first start.'
  );
}

/**
 * At start-up, before the event store is opened: records the configured
 * store on the database's first start, or refuses (StartupError) a store
 * other than the one recorded. A database from before the binding existed is
 * bound to the store its read models evidently followed: PostgreSQL if its
 * es_events holds events, EventStoreDB if checkpoints moved with no events
 * here; one whose projections never moved takes the configured store.
 */
export async function bindEventStore(pool: Pool, configured: EventStoreKind): Promise<void> {
  await migrate(pool, eventStoreBindingMigrations);
  const client = await pool.connect();
  try {
    await client.query('begin');
    // Two instances starting at once on a new database record one store.
    await client.query('lock table event_store_binding in share row exclusive mode');
    let binding = await readBinding(client);
    if (!binding) {
      const store = (await storeFollowedBefore(client)) ?? configured;
      const { rows } = await client.query<{ store: EventStoreKind; recorded_at: Date }>(
        'insert into event_store_binding (store) values ($1) returning store, recorded_at',
        [store],
      );
      binding = rows[0];
    }
    await client.query('commit');
    if (binding && binding.store !== configured) throw new StartupError(bindingMismatch(binding.store, configured, binding.recorded_at));
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The store recorded, if any (a database never started has no table: undefined). For the CLI, which changes nothing. */
export async function recordedEventStore(db: Pool | PoolClient): Promise<{ store: EventStoreKind; recorded_at: Date } | undefined> {
  const { rows } = await db.query<{ present: boolean }>(`select to_regclass('event_store_binding') is not null as present`);
  return rows[0].present ? readBinding(db) : undefined;
}

async function readBinding(db: Pool | PoolClient): Promise<{ store: EventStoreKind; recorded_at: Date } | undefined> {
  const { rows } = await db.query<{ store: EventStoreKind; recorded_at: Date }>('select store, recorded_at from event_store_binding');
  return rows[0];
}

/** For a database from before the binding: the store its read models followed, or undefined if they never moved. */
async function storeFollowedBefore(client: PoolClient): Promise<EventStoreKind | undefined> {
  const { rows } = await client.query<{ events: boolean; checkpoints: boolean }>(
    `select to_regclass('es_events') is not null as events, to_regclass('projection_checkpoints') is not null as checkpoints`,
  );
  const [{ events, checkpoints }] = rows;
  if (events && (await client.query('select 1 from es_events limit 1')).rowCount) return 'postgres';
  if (checkpoints && (await client.query('select 1 from projection_checkpoints where position_commit >= 0 limit 1')).rowCount) return 'esdb';
  return undefined;
}
