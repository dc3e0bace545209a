import { Client } from 'pg';
import { ordersProjection } from '../../projections/orders.projection';
import { applyBatch, KnownCheckpoints } from '../../projections/projection-runner';
import { interleaved } from '../support/order-lives';
import { projectionCases } from '../support/projection-cases';

/**
 * A batch computed from the checkpoint an instance last wrote goes in one
 * round trip, and Postgres checks the checkpoint is still there. Two
 * instances (or a rebuild's swap) moving it in between must never get a
 * batch applied twice or skipped.
 */
describe('projection batches against the checkpoint an instance last saw', () => {
  const cases = projectionCases(ordersProjection);
  const log = interleaved();
  const first = log.slice(0, 10);
  const second = log.slice(10);

  /** How many queries a batch sends. */
  async function counted(run: () => Promise<unknown>): Promise<number> {
    const query = jest.spyOn(Client.prototype, 'query');
    try {
      await run();
      return query.mock.calls.length;
    } finally {
      query.mockRestore();
    }
  }

  it('takes one round trip while the checkpoint is where it was left, and reads it again when another instance moved it', async () => {
    const tables = await cases.freshTables();
    const target = { projection: ordersProjection, tables, checkpoint: 'orders-guard' };
    const apply = (events: typeof log, known?: KnownCheckpoints) =>
      applyBatch(
        cases.pool(),
        [target],
        events.map((e) => e.recorded),
        known,
      );
    const instanceA: KnownCheckpoints = new Map();
    const instanceB: KnownCheckpoints = new Map();

    // A knows nothing yet: it reads the checkpoint (two round trips).
    expect(await counted(() => apply(first, instanceA))).toBe(2);
    expect(instanceA.get('orders-guard')).toEqual(first[first.length - 1].recorded.position);
    // B starts with the checkpoint at the start, as it was before A's batch: the guard refuses,
    // B rolls back and reads the checkpoint, and the batch A applied changes nothing.
    instanceB.set('orders-guard', { commit: 0n, prepare: 0n });
    const rowsAfterFirst = (await cases.pool().query(`select * from ${tables.rm_orders} order by order_no`)).rows;
    expect(await counted(() => apply(first, instanceB))).toBeGreaterThan(2);
    expect((await cases.pool().query(`select * from ${tables.rm_orders} order by order_no`)).rows).toEqual(rowsAfterFirst);
    expect(instanceB.get('orders-guard')).toEqual(instanceA.get('orders-guard'));
    // B now knows where it is: its next batch is one round trip.
    expect(await counted(() => apply(second, instanceB))).toBe(1);
    // A's knowledge is stale now: its replay of the second batch is refused and then skipped.
    expect(await apply(second, instanceA)).toEqual([log[log.length - 1].recorded.position]);

    const oneByOne = await cases.applied(log.map((event) => [event]));
    expect((await cases.pool().query(`select * from ${tables.rm_orders} order by order_no`)).rows).toEqual(
      (await cases.pool().query(`select * from ${oneByOne.rm_orders} order by order_no`)).rows,
    );
  });

  it('refuses a batch whose other statements fail, and keeps the checkpoint', async () => {
    const tables = await cases.freshTables();
    const known: KnownCheckpoints = new Map();
    const target = { projection: ordersProjection, tables, checkpoint: 'orders-guard-broken' };
    await applyBatch(cases.pool(), [target], first.map((e) => e.recorded), known);
    const before = known.get('orders-guard-broken');
    await cases.pool().query(`drop table ${tables.rm_orders}`);
    await expect(applyBatch(cases.pool(), [target], second.map((e) => e.recorded), known)).rejects.toThrow(/does not exist/);
    const { rows } = await cases.pool().query(`select position_commit::text as c, position_prepare::text as p from projection_checkpoints where name = $1`, [
      'orders-guard-broken',
    ]);
    expect({ commit: BigInt(rows[0].c), prepare: BigInt(rows[0].p) }).toEqual(before);
  });
});
