import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { dataPlaceForPostgres } from './reachable-by-postgres';
import { join } from 'node:path';
import { PoolConfig } from 'pg';
import { dataDirectory, embeddedPostgresPassword } from '../../../config/development-secrets';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, StartupError } from '../../../shared/startup-error';
import { describeConnection } from '../connection';
import { embeddedUrl, runningPostmaster, startEmbeddedPostgres } from './embedded-postgres';

const PG_VARIABLES = ['PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE'];
export const DEFAULT_PROBE = '127.0.0.1:5432';

export interface DatabaseChoice {
  readonly database: PoolConfig;
  /** One line for the log: which database, and why. */
  readonly summary: string;
  /** Stops the embedded server this choice started, if it started one. */
  readonly stop?: () => Promise<void>;
}

export interface ChooseDatabaseOptions {
  /**
   * `start` (the service): start the embedded PostgreSQL, creating its cluster if needed.
   * `existing` (the CLI): use the cluster `npm start` left in DATA_DIR, running or not, and never create one.
   */
  readonly embedded?: 'start' | 'existing';
}

/**
 * The database the service uses. A configured one (DATABASE_URL or PG*)
 * always wins, and production never uses anything else. Otherwise, in
 * development, a Postgres answering on EMBEDDED_POSTGRES_PROBE (default
 * 127.0.0.1:5432) is used; when nothing answers there, an embedded
 * PostgreSQL is started with its data in DATA_DIR/postgres, kept across
 * restarts and stopped when the service's process ends.
 */
export async function chooseDatabase(
  configured: PoolConfig,
  production: boolean,
  env: NodeJS.ProcessEnv = process.env,
  options: ChooseDatabaseOptions = {},
): Promise<DatabaseChoice> {
  const { variables, target } = describeConnection(configured);
  const explicit = Boolean(env.DATABASE_URL) || PG_VARIABLES.some((name) => env[name]);
  if (explicit || production) return { database: configured, summary: `database: PostgreSQL at ${target} (from ${variables})` };

  const probe = parseAddress(env.EMBEDDED_POSTGRES_PROBE || DEFAULT_PROBE);
  if (await answers(probe.host, probe.port)) {
    const database = { ...configured, host: probe.host, port: probe.port };
    return {
      database,
      summary: `database: the PostgreSQL answering on ${probe.host}:${probe.port}, database "${database.database}", user "${database.user}" (DATABASE_URL and PG* are not set)`,
    };
  }

  const dataDir = join(dataDirectory(env), 'postgres');
  const logFile = join(dataDirectory(env), 'postgres.log');
  if (options.embedded === 'existing') return existingEmbedded(configured, env, dataDir, logFile, probe);
  const port = env.EMBEDDED_POSTGRES_PORT ? Number(env.EMBEDDED_POSTGRES_PORT) : 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new StartupError(`EMBEDDED_POSTGRES_PORT must be an integer port from 1 to 65535 (got ${JSON.stringify(env.EMBEDDED_POSTGRES_PORT)})`, EXIT_CONFIG);
  }
  const password = await embeddedPostgresPassword(env);
  const logger = new Logger('Database');
  const server = await startEmbeddedPostgres({ dataDir, port, password, logFile, onNote: (line) => logger.warn(line) }).catch((error: Error) => {
    throw new StartupError(`embedded PostgreSQL: ${error.message}`);
  });
  return {
    database: { connectionString: server.url(configured.database ?? 'topup') },
    summary:
      `database: embedded PostgreSQL on 127.0.0.1:${server.port} (user postgres, password in ${join(dataDirectory(env), 'development-secrets.json')}), ` +
      `data in ${server.dataDir}, its log in ${logFile}; started because DATABASE_URL and PG* are not set and nothing answers on ${probe.host}:${probe.port}. ` +
      `It stops with the service.`,
  };
}

/**
 * The embedded cluster `npm start` set up in DATA_DIR: the running server's
 * port when the service has it up (postmaster.pid), else a server of its own
 * on that cluster, stopped by `stop`. A tool never initialises a new cluster:
 * an empty database would only tell it "no schema".
 */
async function existingEmbedded(
  configured: PoolConfig,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  logFile: string,
  probe: { host: string; port: number },
): Promise<DatabaseChoice> {
  // As root, the data may be kept where the postgres user reaches it (reachable-by-postgres.ts).
  const dataKept = process.getuid?.() === 0 ? dataPlaceForPostgres(dataDir) : dataDir;
  if (!existsSync(join(dataKept, 'PG_VERSION'))) {
    throw new StartupError(
      `no database: DATABASE_URL and PG* are not set, nothing answers on ${probe.host}:${probe.port}, and ${dataDir} holds no embedded PostgreSQL ` +
        '(`npm start` sets one up on its first start): set DATABASE_URL, or start the service once',
      EXIT_UNAVAILABLE,
    );
  }
  const password = await embeddedPostgresPassword(env);
  const database = configured.database ?? 'topup';
  const running = runningPostmaster(dataKept)?.port;
  if (running !== undefined) {
    const url = embeddedUrl(password, running, database);
    return {
      database: { connectionString: url },
      summary: `database: the embedded PostgreSQL of ${dataDir}, running on 127.0.0.1:${running}, database "${database}", user "postgres" (DATABASE_URL and PG* are not set)`,
    };
  }
  const server = await startEmbeddedPostgres({ dataDir, password, logFile }).catch((error: Error) => {
    throw new StartupError(`embedded PostgreSQL: ${error.message}`, EXIT_UNAVAILABLE);
  });
  return {
    database: { connectionString: server.url(database) },
    summary: `database: the embedded PostgreSQL of ${dataDir}, started on 127.0.0.1:${server.port} until this command ends, database "${database}", user "postgres" (DATABASE_URL and PG* are not set)`,
    stop: () => server.stop(),
  };
}

export function parseAddress(raw: string): { host: string; port: number } {
  const match = /^(.+):(\d+)$/.exec(raw);
  if (!match || Number(match[2]) > 65535) {
    throw new StartupError(`EMBEDDED_POSTGRES_PROBE must be host:port (got ${JSON.stringify(raw)})`, EXIT_CONFIG);
  }
  return { host: match[1], port: Number(match[2]) };
}

/** Whether anything accepts a TCP connection there within a second. */
export function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}
