import { Pool, PoolClient } from 'pg';

/**
 * Runs several reads as of one moment (a read-only repeatable-read
 * transaction): read apart, a row written between two reads makes the
 * answers disagree, e.g. a count that includes an order its list lacks.
 */
export async function inOneSnapshot<T>(pool: Pool, read: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin isolation level repeatable read read only');
    const result = await read(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
