import { Pool } from 'pg';

/**
 * One step of the schema. The owner of tables declares their migrations in a
 * `.migrations.ts` file of their own beside the code that uses them
 * (console-sessions.migrations.ts beside console-sessions.ts;
 * callbacks.migrations.ts for the tables of the whole callbacks capability),
 * as a `readonly Migration[]` named `<owner>Migrations`, in release order,
 * every id written out. A projection declares its own on the projection
 * (ProjectionMigration), against its tables' names, so that a rebuild can run
 * them on fresh tables. src/schema.ts lists them all. A migration once
 * released is never edited: a change is a new migration.
 */
export interface Migration {
  /** Unique and stable forever, e.g. "event-store/001-events": schema_migrations records it as applied. */
  readonly id: string;
  readonly sql: string;
}

// Any constant shared by every instance; serialises concurrent start-ups.
const MIGRATION_LOCK = 727_001;

/**
 * Applies the migrations not applied yet, in order, each in its own
 * transaction. An advisory lock makes two instances starting at once take turns.
 */
export async function migrate(pool: Pool, migrations: readonly Migration[]): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`create table if not exists schema_migrations (
      id text primary key,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set((await client.query<{ id: string }>('select id from schema_migrations')).rows.map((r) => r.id));
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      await client.query('begin');
      try {
        await client.query(migration.sql);
        await client.query('insert into schema_migrations (id) values ($1)', [migration.id]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`migration ${migration.id} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.id);
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    client.release();
  }
  return applied;
}
