import { randomBytes } from 'node:crypto';
import { Client, Pool, PoolConfig } from 'pg';
import { connectionConfig } from '../../src/config/database-connection';
import { createPool, quoteIdentifier } from '../../src/infrastructure/postgres/connection';

export interface TestDatabase {
  readonly name: string;
  readonly config: PoolConfig;
  /** DATABASE_URL-style settings for child processes. */
  readonly env: Record<string, string>;
  readonly pool: Pool;
  drop(): Promise<void>;
}

/**
 * A fresh database per suite on the server that DATABASE_URL or PG* name
 * (default 127.0.0.1:5432, user postgres), or on the server at `serverUrl`,
 * dropped afterwards.
 */
export async function createTestDatabase(prefix = 'topup_test', serverUrl = process.env.DATABASE_URL): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new Client(withDatabase(connectionConfig(serverUrl), 'postgres'));
  await admin.connect();
  await admin.query(`create database ${quoteIdentifier(name)}`);
  await admin.end();
  return openTestDatabase(name, serverUrl);
}

/** A database that already exists on the same server (one a benchmark kept), to use and perhaps drop. */
export function openTestDatabase(name: string, serverUrl = process.env.DATABASE_URL): TestDatabase {
  const server = connectionConfig(serverUrl);
  const maintenance = withDatabase(server, 'postgres');
  const config = withDatabase(server, name);
  const pool = createPool(config, { max: 30 });
  return {
    name,
    config,
    env: databaseEnv(config),
    pool,
    async drop() {
      await pool.end();
      const admin = new Client(maintenance);
      await admin.connect();
      await admin.query(`drop database if exists ${quoteIdentifier(name)} with (force)`);
      await admin.end();
    },
  };
}

function withDatabase(config: PoolConfig, database: string): PoolConfig {
  if (!config.connectionString) return { ...config, database };
  const url = new URL(config.connectionString);
  url.pathname = `/${database}`;
  return { connectionString: url.toString() };
}

function databaseEnv(config: PoolConfig): Record<string, string> {
  if (config.connectionString) return { DATABASE_URL: config.connectionString };
  const env: Record<string, string> = { PGDATABASE: String(config.database) };
  if (config.host) env.PGHOST = String(config.host);
  if (config.port) env.PGPORT = String(config.port);
  if (config.user) env.PGUSER = String(config.user);
  if (typeof config.password === 'string') env.PGPASSWORD = config.password;
  return env;
}
