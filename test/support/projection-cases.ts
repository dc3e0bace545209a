import { randomUUID } from 'node:crypto';
import { decodeLedgerEvent, LedgerEvent } from '../../projections/ledger-event';
import { Projection, suffixedTables, TableNames } from '../../projections/projection';
import { applyBatch, projectionMigrations } from '../../projections/projection-runner';
import { DomainEvent, encodeEvent } from '../../src/ledger/event-codec';
import { GlobalPosition, RecordedEvent } from '../../src/ledger/ports/event-store.port';
import { migrate } from '../../src/infrastructure/postgres/migrations';
import { createTestDatabase } from './test-database';

/**
 * A suite's cases of one projection: a test database with the checkpoints
 * table, made before the cases and dropped after them, and for each case
 * the projection's tables under names of its own (`rm_orders_case_3` ...),
 * created empty. The live tables of the projections in `reads` (the read
 * models the projection's statements join) are created once, empty.
 */
export function projectionCases<K extends string>(projection: Projection<K>, reads: readonly Projection[] = []) {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let cases = 0;
  beforeAll(async () => {
    db = await createTestDatabase();
    await migrate(db.pool, projectionMigrations(reads));
  });
  afterAll(async () => {
    await db.drop();
  });

  const freshTables = async (): Promise<TableNames<K>> => {
    const tables = suffixedTables(projection, `_case_${++cases}`);
    for (const migration of projection.migrations) await db.pool.query(migration.sql(tables));
    return tables;
  };
  return {
    pool: () => db.pool,
    freshTables,
    /** Fresh tables after the runner applied the batches, each in its own transaction, from a checkpoint of the case's own. */
    async applied(batches: readonly (readonly LedgerEvent[])[]): Promise<TableNames<K>> {
      const tables = await freshTables();
      const target = { projection, tables, checkpoint: `${projection.name}-case-${cases}` };
      for (const batch of batches)
        await applyBatch(
          db.pool,
          [target],
          batch.map((e) => e.recorded),
        );
      return tables;
    },
  };
}

/** A domain event as the log holds it (encoded, at this revision and position) and as the runner decodes it. */
export function recordedLedgerEvent(
  streamId: string,
  revision: bigint,
  position: GlobalPosition,
  event: DomainEvent & { data: { at: string } },
  metadata: RecordedEvent['metadata'] = {},
): LedgerEvent {
  return decodeLedgerEvent({
    id: randomUUID(),
    streamId,
    revision,
    position,
    type: event.type,
    data: encodeEvent(event).data as RecordedEvent['data'],
    metadata,
    createdAt: new Date(event.data.at),
  })!;
}
