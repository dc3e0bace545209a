import { Pool, PoolClient } from 'pg';

/** Runs `work` in one transaction: e.g. a change and its audit row commit together or not at all. */
export function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  return run(pool, 'begin', work);
}

/**
 * Runs several reads as of one moment (a read-only repeatable-read
 * transaction): read apart, a row written between two reads makes the
 * answers disagree, e.g. a count that includes an order its list lacks.
 */
export function inOneSnapshot<T>(pool: Pool, read: (client: PoolClient) => Promise<T>): Promise<T> {
  return run(pool, 'begin isolation level repeatable read read only', read);
}

async function run<T>(pool: Pool, begin: string, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is not handed back to the pool.
    await client.query('rollback').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
