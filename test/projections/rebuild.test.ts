import { Pool } from 'pg';
import { allProjections } from '../../projections/all-projections';
import { rebuildProjection } from '../../projections/rebuild';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { ResolveOrder } from '../../src/ledger/commands/resolve-order/resolve-order.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { openWallet, orderInput } from '../support/fixtures';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/** Every row of every read-model table, in a stable order. */
async function snapshot(pool: Pool): Promise<Record<string, string[]>> {
  const tables: Record<string, string[]> = {};
  for (const projection of allProjections) {
    for (const table of projection.tables) {
      const { rows } = await pool.query<{ r: string }>(`select row_to_json(x)::text as r from ${table} x order by 1`);
      tables[table] = rows.map((row) => row.r);
    }
  }
  return tables;
}

describe('projection rebuild', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  async function mixedActivity(prefix: string, orders: number) {
    const merchant = await openWallet(service.commands, 40n * 120n);
    for (let i = 0; i < orders; i++) {
      const result = await service.commands.execute(new SubmitOrder(orderInput(merchant, `${prefix}-${i}`, { amount: BigInt(100 + i) })));
      if (result.outcome !== 'accepted') continue;
      const orderNo = result.order.order!.orderNo;
      if (i % 4 === 0) await service.commands.execute(new SettleOrder(orderNo));
      if (i % 4 === 1) await service.commands.execute(new ReleaseFunds(orderNo, 'UPSTREAM_REJECTED', 'rejected'));
      if (i % 4 === 2) {
        await service.commands.execute(new MarkResultUnknown(orderNo, 'timeout'));
        if (i % 8 === 2) await service.commands.execute(new ResolveOrder(orderNo, 'success', 'staff-1', 'checked'));
      }
    }
    await service.commands.execute(new DepositFunds(merchant, `${prefix}-late`, 5_000n, 'ops'));
  }

  it('on an empty log swaps in empty tables, and the live runner then applies the first events once', async () => {
    for (const projection of allProjections) {
      const report = await rebuildProjection(service.pool, service.store, projection);
      expect(report.events).toBe(0);
    }
    await mixedActivity('first', 8);
    await service.catchUp();
    const facts = await checkEventInvariants(service.store);
    expect(await checkReadModels(service.pool, facts)).toEqual([]);
  });

  it('gives identical rows to the live projections, row for row', async () => {
    await mixedActivity('quiet', 60);
    await service.catchUp();
    const live = await snapshot(service.pool);
    expect(live.rm_orders.length).toBeGreaterThan(40);
    expect(live.rm_statement_lines.length).toBeGreaterThan(80);

    for (const projection of allProjections) {
      const report = await rebuildProjection(service.pool, service.store, projection);
      expect(report.events).toBeGreaterThan(100);
    }
    expect(await snapshot(service.pool)).toEqual(live);
  });

  it('swaps in while commands keep arriving, and the live runner carries on from the rebuilt tables', async () => {
    let stop = false;
    const load = (async () => {
      let n = 0;
      while (!stop) await mixedActivity(`load-${n++}`, 12);
    })();
    await new Promise((r) => setTimeout(r, 300));
    for (const projection of allProjections) await rebuildProjection(service.pool, service.store, projection);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;

    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    await service.catchUp();
    expect(await checkReadModels(service.pool, facts)).toEqual([]);

    // And one more rebuild on the now-quiet ledger changes nothing.
    const live = await snapshot(service.pool);
    for (const projection of allProjections) await rebuildProjection(service.pool, service.store, projection);
    expect(await snapshot(service.pool)).toEqual(live);
    const leftovers = await service.pool.query(`select tablename from pg_tables where tablename like 'rm\\_%\\_\\_%'`);
    expect(leftovers.rows).toEqual([]);
  });
});
