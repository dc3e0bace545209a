import { openCliContext } from '../../src/cli/cli-context';
import { bindEventStore } from '../../src/infrastructure/event-store/event-store-binding';
import { StartupError } from '../../src/shared/startup-error';
import { runServiceUntilExit } from '../support/child-service';
import { startService, TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

/**
 * A database's read models follow one event store for good: a start, or a
 * CLI command, configured with the other is refused before it connects to
 * that store. No EventStoreDB runs here: the connection string names a port
 * nothing listens on, and the refusal comes first.
 */
const ESDB = { EVENT_STORE: 'esdb', EVENTSTORE_CONNECTION_STRING: 'esdb://127.0.0.1:1?tls=false' };

describe('the event store a database follows', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.allSettled(databases.map((db) => db.drop()));
  });
  async function freshDatabase(): Promise<TestDatabase> {
    const db = await createTestDatabase('topup_binding');
    databases.push(db);
    return db;
  }

  it('a database started on PostgreSQL refuses EventStoreDB, in the service and in the CLI, naming both and the remedy', async () => {
    const db = await freshDatabase();
    const service = await startService(db);
    await service.stop();

    const refused = await startService(db, ESDB).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StartupError);
    const message = (refused as Error).message;
    expect(message).toContain("EVENT_STORE=esdb, but this database's read models and projection checkpoints follow PostgreSQL (EVENT_STORE=postgres)");
    expect(message).toContain('Point DATABASE_URL at a fresh database to run on EventStoreDB (EVENT_STORE=esdb), or set EVENT_STORE=postgres again');

    const cli = await openCliContext({ ...process.env, ...db.env, ...ESDB }).catch((error: unknown) => error);
    expect((cli as Error).message).toContain('follow PostgreSQL (EVENT_STORE=postgres)');

    // Still fine on the store it follows.
    const again = await startService(db);
    await again.stop();
  });

  it('the service prints the refusal without a stack and exits 78', async () => {
    const db = await freshDatabase();
    await bindEventStore(db.pool, 'postgres');
    const { PGHOST, PGPORT, PGUSER, PGPASSWORD, DATABASE_URL } = process.env;
    const exit = await runServiceUntilExit({ ...TEST_ENV, PGHOST, PGPORT, PGUSER, PGPASSWORD, DATABASE_URL, ...db.env, ...ESDB, PORT: '0' });
    expect(exit.code).toBe(78);
    expect(exit.stdout + exit.stderr).toContain("but this database's read models and projection checkpoints follow PostgreSQL");
    expect(exit.stdout + exit.stderr).not.toMatch(/\n\s+at /);
    expect(exit.stdout).not.toContain('listening on');
  });

  it('a database bound to EventStoreDB refuses PostgreSQL', async () => {
    const db = await freshDatabase();
    await bindEventStore(db.pool, 'esdb');
    const refused = await startService(db).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as Error).message).toContain(
      "EVENT_STORE=postgres, but this database's read models and projection checkpoints follow EventStoreDB (EVENT_STORE=esdb)",
    );
    // Nothing of PostgreSQL's log was created on it.
    const { rows } = await db.pool.query(`select to_regclass('es_events') as events`);
    expect(rows[0].events).toBeNull();
  });

  it('binds a database from before the binding to the store its read models followed', async () => {
    const db = await freshDatabase();
    const service = await startService(db);
    await service.store.append('binding-probe-1', [{ type: 'Probe', data: {} }], 'no_stream');
    await service.stop();
    await db.pool.query(`drop table event_store_binding; delete from schema_migrations where id like 'event-store-binding/%'`);

    const refused = await startService(db, ESDB).catch((error: unknown) => error);
    expect((refused as Error).message).toContain('follow PostgreSQL (EVENT_STORE=postgres)');

    // Checkpoints that moved with no events here: the read models followed EventStoreDB.
    const other = await freshDatabase();
    await bindEventStore(other.pool, 'esdb');
    await other.pool.query(`create table projection_checkpoints (name text primary key, position_commit bigint not null, position_prepare bigint not null)`);
    await other.pool.query(`insert into projection_checkpoints values ('orders', 4096, 4096)`);
    await other.pool.query(`drop table event_store_binding; delete from schema_migrations where id like 'event-store-binding/%'`);
    await expect(bindEventStore(other.pool, 'postgres')).rejects.toThrow('follow EventStoreDB (EVENT_STORE=esdb)');
  });
});
