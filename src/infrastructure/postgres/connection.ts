import { Client, Pool, PoolConfig } from 'pg';

/**
 * Connection settings: DATABASE_URL when set, otherwise libpq's PG* variables
 * (PGHOST may name a Unix socket directory), with local defaults.
 */
export function connectionConfig(databaseUrl: string | undefined, env: NodeJS.ProcessEnv = process.env): PoolConfig {
  if (databaseUrl) return { connectionString: databaseUrl };
  return {
    host: env.PGHOST ?? '127.0.0.1',
    port: env.PGPORT ? Number(env.PGPORT) : 5432,
    user: env.PGUSER ?? 'postgres',
    password: env.PGPASSWORD,
    database: env.PGDATABASE ?? 'topup',
  };
}

/** The database a configuration names, and the same server's maintenance database. */
function databaseOf(config: PoolConfig): { name: string; maintenance: PoolConfig } {
  if (config.connectionString) {
    const url = new URL(config.connectionString);
    const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres';
    url.pathname = '/postgres';
    return { name, maintenance: { connectionString: url.toString() } };
  }
  return { name: config.database ?? 'postgres', maintenance: { ...config, database: 'postgres' } };
}

/** Creates the configured database when it does not exist yet; safe to race. */
export async function ensureDatabase(config: PoolConfig): Promise<void> {
  const { name, maintenance } = databaseOf(config);
  const probe = new Client(config);
  try {
    await probe.connect();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error; // invalid_catalog_name
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new Client(maintenance);
  await admin.connect();
  try {
    await admin.query(`create database ${quoteIdentifier(name)}`);
  } catch (error) {
    // Created meanwhile by another instance: Postgres reports the lost race as
    // duplicate_database or, when both checked the name first, unique_violation.
    if (!['42P04', '23505'].includes((error as { code?: string }).code ?? '')) throw error;
  } finally {
    await admin.end();
  }
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

const UNAVAILABLE_CODES = new Set([
  '57P01', // admin_shutdown: the backend was terminated
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or shutting down
  '53300', // too_many_connections
]);

/**
 * Whether an error means the database could not be reached or dropped the
 * connection, as opposed to a fault in what was asked of it. Such errors are
 * expected during a restart or failover and heal by themselves.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || /^E(CONNREFUSED|CONNRESET|PIPE|HOSTUNREACH|TIMEDOUT)$/.test(code))) return true;
  return (
    typeof message === 'string' &&
    /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)|is not currently accepting connections$/.test(message)
  );
}

/** How long a request waits for a connection before it fails (a 500 the client may retry). */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * A pool that survives its server going away. node-postgres emits 'error' on
 * a client whose connection ends (a terminated backend, a restart, a
 * failover), and the pool listens only while the client is idle: a client
 * checked out between two queries would crash the process. Every client
 * therefore gets a listener for its whole life; the query in flight fails on
 * its own, and the pool discards the client when it comes back unusable.
 */
export function createPool(config: PoolConfig, max = 20): Pool {
  const pool = new Pool({
    ...config,
    max,
    application_name: 'topup-ledger',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A server that vanished without closing the socket is noticed, not waited on forever.
    keepAlive: true,
  });
  pool.on('connect', (client) => client.on('error', () => undefined));
  // The pool re-emits an idle client's error; it has already dropped that client.
  pool.on('error', () => undefined);
  return pool;
}
