import { Pool } from 'pg';
import { EventStore, GlobalPosition, START } from '../src/ledger/ports/event-store.port';
import { deleteCheckpoint, lockCheckpoint, saveCheckpoint } from './checkpoints';
import { applyBatch } from './projection-runner';
import { liveTables, Projection, suffixedTables } from './projection';

const REBUILD_BATCH = 1000;

export interface RebuildReport {
  projection: string;
  events: number;
  position: GlobalPosition;
}

/**
 * Replays the whole log into fresh tables while the live ones keep serving,
 * then swaps them in one transaction that holds the live checkpoint's lock:
 * the live runner waits at that lock and afterwards continues from the
 * rebuilt tables' checkpoint.
 */
export async function rebuildProjection(
  pool: Pool,
  store: EventStore,
  projection: Projection,
  onProgress: (events: number) => void = () => undefined,
): Promise<RebuildReport> {
  const generation = `r${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
  const live = liveTables(projection);
  const fresh = suffixedTables(projection, `__${generation}`);
  const shadowCheckpoint = `${projection.name}__${generation}`;
  for (const migration of projection.migrations) await pool.query(migration.sql(fresh));

  let position = START;
  let events = 0;
  // Stops at the first short batch rather than chasing the log to empty: under
  // steady load that would never end. Whatever arrives later is applied by the
  // live runner, which resumes from the rebuilt checkpoint after the swap. So
  // it reads up to the horizon only: the second catch-up runs inside the
  // swap's transaction, whose own id would hold every later event back.
  const catchUp = async () => {
    for (;;) {
      const batch = await store.readAll(position, REBUILD_BATCH, { upToHorizon: true });
      if (batch.length > 0) {
        await applyBatch(pool, [{ projection, checkpoint: shadowCheckpoint, tables: fresh }], batch);
        position = batch[batch.length - 1].position;
        events += batch.length;
        onProgress(events);
      }
      if (batch.length < REBUILD_BATCH) return;
    }
  };
  try {
    await catchUp();
    const client = await pool.connect();
    try {
      await client.query('begin');
      await lockCheckpoint(client, projection.name);
      await catchUp(); // what came meanwhile, while the live runner waits at the lock
      for (const table of projection.tables) {
        await client.query(`alter table ${live[table]} rename to ${table}__old_${generation}`);
        await client.query(`alter table ${fresh[table]} rename to ${live[table]}`);
        await client.query(`drop table ${table}__old_${generation}`);
      }
      // Where the rebuilt tables stand: START when the log was empty and no batch ran.
      await saveCheckpoint(client, projection.name, position);
      await deleteCheckpoint(client, shadowCheckpoint);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  } catch (error) {
    for (const table of projection.tables) await pool.query(`drop table if exists ${fresh[table]}`).catch(() => undefined);
    await deleteCheckpoint(pool, shadowCheckpoint).catch(() => undefined);
    throw error;
  }
  return { projection: projection.name, events, position };
}
