import { Pool } from 'pg';
import { LedgerEvent } from '../../projections/ledger-event';
import { Projection, suffixedTables, TableNames } from '../../projections/projection';
import { applyBatch } from '../../projections/projection-runner';

/** A projection's tables under names of a test case's own (`rm_orders_case_3` ...), created empty. */
export async function caseTables<K extends string>(pool: Pool, projection: Projection<K>, caseNumber: number): Promise<TableNames<K>> {
  const tables = suffixedTables(projection, `_case_${caseNumber}`);
  for (const step of projection.schema) await pool.query(step(tables));
  return tables;
}

/** The batches through the runner into those tables, each in its own transaction, from a checkpoint of their own. */
export async function applyInBatches<K extends string>(
  pool: Pool,
  target: { projection: Projection<K>; tables: TableNames<K>; checkpoint: string },
  batches: readonly (readonly LedgerEvent[])[],
): Promise<void> {
  for (const batch of batches)
    await applyBatch(
      pool,
      [target],
      batch.map((e) => e.recorded),
    );
}
