import { Pool } from 'pg';

export interface Migration {
  /** Unique and stable forever, e.g. "event-store/001-events". */
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
