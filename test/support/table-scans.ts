import { Pool } from 'pg';
import { createPool } from '../../src/infrastructure/postgres/connection';
import { migrate, Migration } from '../../src/infrastructure/postgres/migrations';
import { createTestDatabase, TestDatabase } from './test-database';

export interface Scans {
  /** Sequential scans of the table so far. */
  seq: number;
  /** Index scans of the table so far. */
  idx: number;
  /** Blocks of the table and its indexes read or found in shared buffers so far. */
  blocks: number;
}

/**
 * The statistics Postgres keeps of each table's scans, once every idle
 * connection of the `observed` pool (one connection) and of `db` has
 * published its own counts. An idle backend otherwise publishes them up to
 * ten seconds late, when its last report was less than a second ago: the
 * counts of a seeding statement could land in the middle of a measurement.
 */
export async function tableScans(observed: Pool, db: Pool, tables: readonly string[]): Promise<Record<string, Scans>> {
  await publishCounts(observed);
  await publishCounts(db);
  const { rows } = await db.query<{ relname: string; seq: string; idx: string; blocks: string }>(
    `select t.relname, t.seq_scan::text as seq, coalesce(t.idx_scan, 0)::text as idx,
            (io.heap_blks_hit + io.heap_blks_read + coalesce(io.idx_blks_hit, 0) + coalesce(io.idx_blks_read, 0))::text as blocks
     from pg_stat_user_tables t join pg_statio_user_tables io using (relid)
     where t.relname = any($1)`,
    [tables],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, { seq: Number(row.seq), idx: Number(row.idx), blocks: Number(row.blocks) }]));
}

/** Has each idle connection of the pool publish its statistics now (at the end of its next statement). */
async function publishCounts(pool: Pool): Promise<void> {
  const clients = await Promise.all(Array.from({ length: Math.max(1, pool.idleCount) }, () => pool.connect()));
  try {
    for (const client of clients) {
      await client.query('select pg_stat_force_next_flush()');
      await client.query('select 1');
    }
  } finally {
    for (const client of clients) client.release();
  }
}

/** What happened to each table between two readings of tableScans. */
export function scansBetween(before: Record<string, Scans>, after: Record<string, Scans>): Record<string, Scans> {
  return Object.fromEntries(
    Object.entries(after).map(([table, now]) => [
      table,
      { seq: now.seq - before[table].seq, idx: now.idx - before[table].idx, blocks: now.blocks - before[table].blocks },
    ]),
  );
}

export interface PlanTestDatabase {
  db: TestDatabase;
  /** One connection, as a service's pooled connection runs its statements again and again; its scans are the ones read. */
  connection: Pool;
  /** tableScans of the tables given, with every connection's counts published. */
  scans(): Promise<Record<string, Scans>>;
  close(): Promise<void>;
}

/**
 * A new database with the migrations applied and autovacuum off on `tables`:
 * their statistics stay as they were, as between two runs of autovacuum, so
 * a test can grow them under a plan made while they were small.
 */
export async function planTestDatabase(migrations: readonly Migration[], tables: readonly string[]): Promise<PlanTestDatabase> {
  const db = await createTestDatabase();
  await migrate(db.pool, migrations);
  for (const table of tables) await db.pool.query(`alter table ${table} set (autovacuum_enabled = false)`);
  // Made as the service makes its pools: an idle connection the database's drop ends while it is closing is not an unhandled error.
  const connection = createPool(db.config, { max: 1 });
  return {
    db,
    connection,
    scans: () => tableScans(connection, db.pool, tables),
    async close() {
      await connection.end();
      await db.drop();
    },
  };
}
