import { PoolClient } from 'pg';
import { GlobalPosition, START } from '../src/ledger/ports/event-store.port';

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
