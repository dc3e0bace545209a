import { Client, Pool, PoolConfig } from 'pg';
import { WaitingPool } from './database-wait';
import { EXIT_UNAVAILABLE, StartupError } from '../../shared/startup-error';

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

/**
 * Checks that the configured database answers. A missing one is created when
 * `create` is set (development; safe to race), and refused otherwise: in
 * production a wrong name must not start an empty ledger. Failures are
 * StartupErrors naming the variable and the target, never the password.
 */
export async function ensureDatabase(config: PoolConfig, { create }: { create: boolean } = { create: true }): Promise<void> {
  const { name, maintenance } = databaseOf(config);
  // A bounded wait: a silent network would otherwise hold start-up for the OS's TCP timeout.
  const probe = new Client({ ...config, connectionTimeoutMillis: STARTUP_CONNECT_TIMEOUT_MS });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if (errorCode(error) !== '3D000' || !create) throw connectionFailure(error, config); // 3D000: invalid_catalog_name
  } finally {
    await probe.end().catch(() => undefined);
  }
  const admin = new Client({ ...maintenance, connectionTimeoutMillis: STARTUP_CONNECT_TIMEOUT_MS });
  try {
    await admin.connect();
    await admin.query(`create database ${quoteIdentifier(name)}`);
  } catch (error) {
    // Created meanwhile by another instance: Postgres reports the lost race as
    // duplicate_database or, when both checked the name first, unique_violation.
    if (!['42P04', '23505'].includes(errorCode(error) ?? '')) throw connectionFailure(error, config, `cannot create the database on`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

/** How long start-up waits for the server before it names the setting and gives up. */
const STARTUP_CONNECT_TIMEOUT_MS = 10_000;

function errorCode(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}

/** Which variables a configuration came from and where it points: host:port, database and user, without the password. */
export function describeConnection(config: PoolConfig): { variables: string; target: string } {
  if (config.connectionString) {
    const url = new URL(config.connectionString);
    const host = url.hostname || url.searchParams.get('host') || 'localhost';
    const user = decodeURIComponent(url.username) || url.searchParams.get('user') || 'the default user';
    const target = `${host}:${url.port || 5432}, database "${databaseOf(config).name}", user "${user}"`;
    return { variables: 'DATABASE_URL', target };
  }
  return {
    variables: 'PGHOST/PGPORT/PGUSER/PGDATABASE (DATABASE_URL is not set)',
    target: `${config.host}:${config.port}, database "${config.database}", user "${config.user}"`,
  };
}

/** One sentence for the operator: the variable to look at, the target, and what went wrong. */
export function connectionFailure(error: unknown, config: PoolConfig, doing = 'cannot connect to'): StartupError {
  const { variables, target } = describeConnection(config);
  const code = errorCode(error);
  const message = (error as Error)?.message ?? String(error);
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused (is Postgres running there?)',
    ENOTFOUND: 'the host name does not resolve',
    EAI_AGAIN: 'the host name does not resolve (DNS lookup failed)',
    ETIMEDOUT: 'no answer (timed out)',
    EHOSTUNREACH: 'the host is unreachable',
    '28P01': 'password authentication failed',
    '3D000': 'the database does not exist; with NODE_ENV=production the service never creates it: create it first (e.g. createdb) or correct the variable',
  };
  const timedOut = /timeout/i.test(message) && code === undefined;
  const reason = timedOut ? `no answer within ${STARTUP_CONNECT_TIMEOUT_MS / 1000} s` : (reasons[code ?? ''] ?? message);
  const unreachable = timedOut || ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(code ?? '');
  return new StartupError(
    `${variables}: ${doing} Postgres at ${target}: ${reason}${code && !reasons[code] ? ` (${code})` : ''}`,
    unreachable ? EXIT_UNAVAILABLE : undefined,
  );
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** How long a checkout waits for a free connection in the pool before it counts as a failure. */
const POOL_CONNECT_TIMEOUT_MS = 5000;

export interface PoolOptions {
  max?: number;
  applicationName?: string;
  /** How long checkouts wait for a database that does not answer (a failover): DATABASE_WAIT_MS; 0 fails at once. */
  waitMs?: number;
  /** Told of each failed connection attempt that is waited out. */
  onWait?: (error: unknown) => void;
  /** How long a connection stays open unused (DATABASE_POOL_IDLE_MS for the service's pools); 0 keeps it; node-postgres's 10 s when not given. */
  idleMs?: number;
}

/**
 * A pool that survives its server going away. node-postgres emits 'error' on
 * a client whose connection ends (a terminated backend, a restart, a
 * failover), and the pool listens only while the client is idle: a client
 * checked out between two queries would crash the process. Every client
 * therefore gets a listener for its whole life; the query in flight fails on
 * its own, and the pool discards the client when it comes back unusable.
 */
export function createPool(config: PoolConfig, { max = 20, applicationName = 'topup-ledger', waitMs = 0, onWait, idleMs }: PoolOptions = {}): Pool {
  const pool = new WaitingPool(
    {
      ...config,
      max,
      application_name: applicationName,
      connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
      // A server that vanished without closing the socket is noticed, not waited on forever.
      keepAlive: true,
      ...(idleMs === undefined ? {} : { idleTimeoutMillis: idleMs }),
    },
    { waitMs, onWait },
  );
  pool.on('connect', (client) => client.on('error', () => undefined));
  // The pool re-emits an idle client's error; it has already dropped that client.
  pool.on('error', () => undefined);
  return pool;
}
