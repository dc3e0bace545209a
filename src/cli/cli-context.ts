import { Pool } from 'pg';
import { allProjections } from '../../projections/all-projections';
import { AppConfig, loadConfig } from '../config/config';
import { createEventStore } from '../infrastructure/event-store/create-event-store';
import { bindingMismatch, recordedEventStore } from '../infrastructure/event-store/event-store-binding';
import { EventStore } from '../ledger/ports/event-store.port';
import { createPool } from '../infrastructure/postgres/connection';
import { chooseDatabase } from '../infrastructure/postgres/embedded/local-database';

/** What a command needs: the service's own configuration, a small pool and the event store. */
export interface CliContext {
  config: AppConfig;
  /** False when SECRETS_KEY was unset and config.secretsKey is a stand-in that opens nothing. */
  secretsKeySet: boolean;
  pool: Pool;
  store: EventStore;
  close(): Promise<void>;
}

/** The CLI could not get going: a clear sentence for the operator, exit 3. */
export class EnvironmentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvironmentError';
  }
}

/** The CLI never serves staff, and only reseal-secrets reads merchant secrets (it refuses to run on the stand-in key). */
const UNUSED_SECRETS = { ADMIN_TOKEN: 'cli-never-uses-the-admin-token', SECRETS_KEY: '0'.repeat(64) };

/**
 * Reads the same environment as the service (a bad variable throws the same
 * ConfigError), finds the database as `npm start` does (DATABASE_URL, else
 * PG*, else a Postgres answering on 127.0.0.1:5432, else the embedded one in
 * DATA_DIR), says which on stderr, and opens the same stores. It never
 * creates the database or runs migrations: that is the service's job at
 * start-up, so a missing schema is reported instead of half-created by a tool.
 */
export async function openCliContext(env: NodeJS.ProcessEnv, note: (line: string) => void = () => undefined): Promise<CliContext> {
  const { config: loaded } = loadConfig({
    ...env,
    ADMIN_TOKEN: env.ADMIN_TOKEN || UNUSED_SECRETS.ADMIN_TOKEN,
    SECRETS_KEY: env.SECRETS_KEY || UNUSED_SECRETS.SECRETS_KEY,
    // Nor does it talk to the upstream: production's "UPSTREAM_URL is required" is not its concern.
    UPSTREAM_SIMULATOR: env.UPSTREAM_URL || env.UPSTREAM_SIMULATOR ? env.UPSTREAM_SIMULATOR : 'true',
  });
  const choice = await chooseDatabase(loaded.database, loaded.production, env, { embedded: 'existing' });
  note(choice.summary);
  const config: AppConfig = { ...loaded, database: choice.database };
  const pool = createPool(config.database, { max: 4 });
  const release = async () => {
    await pool.end().catch(() => undefined);
    await choice.stop?.();
  };
  let store: EventStore;
  try {
    await checkSchema(pool, config);
    store = await createEventStore(config, pool);
  } catch (error) {
    await release();
    throw error;
  }
  return {
    config,
    secretsKeySet: Boolean(env.SECRETS_KEY),
    pool,
    store,
    async close() {
      await store.close();
      await release();
    },
  };
}

async function checkSchema(pool: Pool, config: AppConfig): Promise<void> {
  const tables = ['projection_checkpoints', ...allProjections.flatMap((p) => p.tables)];
  if (config.eventStore === 'postgres') tables.unshift('es_events');
  let missing: string[];
  try {
    const { rows } = await pool.query<{ name: string }>(`select name from unnest($1::text[]) as t(name) where to_regclass(quote_ident(name)) is null`, [
      tables,
    ]);
    missing = rows.map((r) => r.name);
  } catch (error) {
    throw new EnvironmentError(connectionProblem(error, config));
  }
  if (missing.length > 0) {
    throw new EnvironmentError(
      `the database has no ${missing.join(', ')}: start the service once against it (it creates the schema at start-up), or check DATABASE_URL / PG*`,
    );
  }
  const binding = await recordedEventStore(pool);
  if (binding && binding.store !== config.eventStore) throw new EnvironmentError(bindingMismatch(binding.store, config.eventStore, binding.recorded_at));
}

function connectionProblem(error: unknown, config: AppConfig): string {
  const { code, message } = error as { code?: string; message?: string };
  const where = config.database.connectionString
    ? new URL(config.database.connectionString).host + new URL(config.database.connectionString).pathname
    : `${config.database.host}:${config.database.port}/${config.database.database}`;
  if (code === '3D000') return `the database ${where} does not exist: start the service once (it creates it), or check DATABASE_URL / PG*`;
  return `cannot use Postgres at ${where}: ${message ?? String(error)}`;
}
