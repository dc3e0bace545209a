import { Pool } from 'pg';

export interface Scans {
  /** Sequential scans of the table so far. */
  seq: number;
  /** Index scans of the table so far. */
  idx: number;
  /** Blocks of the table and its indexes read or found in shared buffers so far. */
  blocks: number;
}

/**
 * The statistics Postgres keeps of each table's scans, once the `observed`
 * pool's (one connection) own counts are published: a backend publishes them
 * at most once a second otherwise, and only when idle.
 */
export async function tableScans(observed: Pool, db: Pool, tables: readonly string[]): Promise<Record<string, Scans>> {
  await observed.query('select pg_stat_force_next_flush()');
  await observed.query('select 1');
  const { rows } = await db.query<{ relname: string; seq: string; idx: string; blocks: string }>(
    `select t.relname, t.seq_scan::text as seq, coalesce(t.idx_scan, 0)::text as idx,
            (io.heap_blks_hit + io.heap_blks_read + coalesce(io.idx_blks_hit, 0) + coalesce(io.idx_blks_read, 0))::text as blocks
     from pg_stat_user_tables t join pg_statio_user_tables io using (relid)
     where t.relname = any($1)`,
    [tables],
  );
  return Object.fromEntries(rows.map((row) => [row.relname, { seq: Number(row.seq), idx: Number(row.idx), blocks: Number(row.blocks) }]));
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
