import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/infrastructure/postgres/embedded/embedded-postgres';

export interface PrivatePostgres {
  /** DATABASE_URL of the `topup` database (the service creates it on first start). */
  readonly url: string;
  /** Stops the server the way a crash would: an immediate shutdown, shared memory and unwritten WAL lost. */
  crash(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A Postgres server of the suite's own (the embedded PostgreSQL the service
 * starts when it finds none), for tests that crash the database server: the
 * machine's shared server is never stopped by a test.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'topup-pg-'));
  // Run as root, the server runs as another user, who must reach its data directory.
  await chmod(dir, 0o755);
  const server = await startEmbeddedPostgres({ dataDir: join(dir, 'data') });
  return {
    url: server.url('topup'),
    crash: () => server.crash(),
    start: () => server.start(),
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
