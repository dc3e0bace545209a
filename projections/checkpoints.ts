import { escapeLiteral, Pool, PoolClient, QueryResult } from 'pg';
import { GlobalPosition, START } from '../src/ledger/ports/event-store.port';
import { Statement } from './projection';

/**
 * The projections' checkpoints (projection_checkpoints): how far each has
 * applied the log. Every read and write of the table is here: the runner's
 * locks and moves, a rebuild's swap, and the positions the status page, the
 * lag gauges and the verification report. Its migration is in
 * checkpoints.migrations.ts.
 */

/** Reads a checkpoint and locks it until the transaction ends. */
export async function lockCheckpoint(client: PoolClient, name: string): Promise<GlobalPosition> {
  await client.query(`insert into projection_checkpoints (name, position_commit, position_prepare) values ($1, $2, $3) on conflict do nothing`, [
    name,
    START.commit.toString(),
    START.prepare.toString(),
  ]);
  const { rows } = await client.query<{ c: string; p: string }>(
    'select position_commit::text as c, position_prepare::text as p from projection_checkpoints where name = $1 for update',
    [name],
  );
  return { commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) };
}

export async function saveCheckpoint(client: PoolClient, name: string, position: GlobalPosition): Promise<void> {
  await client.query('update projection_checkpoints set position_commit = $2, position_prepare = $3, updated_at = now() where name = $1', [
    name,
    position.commit.toString(),
    position.prepare.toString(),
  ]);
}

/**
 * Opens the batch's transaction and locks these checkpoints (created at
 * START if new) in name order, as every batch does, so two instances'
 * batches never deadlock: one round trip. The positions by name.
 */
export async function beginAndLockCheckpoints(client: PoolClient, checkpoints: readonly string[]): Promise<Map<string, GlobalPosition>> {
  const names = checkpoints.map((name) => escapeLiteral(name));
  const locked = (await client.query(
    `begin;
       insert into projection_checkpoints (name, position_commit, position_prepare)
         select name, ${START.commit}, ${START.prepare} from unnest(array[${names.join(', ')}]) as name on conflict do nothing;
       select name, position_commit::text as c, position_prepare::text as p from projection_checkpoints where name in (${names.join(', ')})
         order by name for update`,
  )) as unknown as QueryResult<{ name: string; c: string; p: string }>[];
  return new Map(locked[2].rows.map((row) => [row.name, { commit: BigInt(row.c), prepare: BigInt(row.p) }]));
}

/** The statement that moves a checkpoint, sent with the batch's other statements. */
export function checkpointMove(name: string, to: GlobalPosition): Statement {
  return {
    text: 'update projection_checkpoints set position_commit = $2, position_prepare = $3, updated_at = now() where name = $1',
    values: [name, to.commit, to.prepare],
  };
}

export async function deleteCheckpoint(db: Pool | PoolClient, name: string): Promise<void> {
  await db.query('delete from projection_checkpoints where name = $1', [name]);
}

/** These checkpoints' positions, as text (a name with no checkpoint yet has no row). */
export async function checkpointRows(db: Pool | PoolClient, names: readonly string[]): Promise<{ name: string; c: string; p: string }[]> {
  const { rows } = await db.query<{ name: string; c: string; p: string }>(
    'select name, position_commit::text as c, position_prepare::text as p from projection_checkpoints where name = any($1)',
    [names],
  );
  return rows;
}

/** Every checkpoint, by name, with its position as text and when it last moved. */
export async function allCheckpointRows(pool: Pool): Promise<{ name: string; c: string; p: string; updated_at: Date }[]> {
  const { rows } = await pool.query<{ name: string; c: string; p: string; updated_at: Date }>(
    'select name, position_commit::text as c, position_prepare::text as p, updated_at from projection_checkpoints order by name',
  );
  return rows;
}
