import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { openWallet, orderInput, walletAmounts } from '../support/fixtures';
import { RunningService, serviceOnFreshDatabase, startService } from '../support/service';

describe('200 concurrent submits on one wallet with funds for 50', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  it('accepts exactly 50, never overdraws, and the log and read models agree', async () => {
    const merchant = await openWallet(service.commands, 50n * 120n);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => service.commands.execute(new SubmitOrder(orderInput(merchant, `HOT-${i}`)))));
    const accepted = results.filter((r) => r.outcome === 'accepted');
    const refused = results.filter((r) => r.outcome === 'refused');
    expect(accepted).toHaveLength(50);
    expect(refused).toHaveLength(150);
    expect(new Set(refused.map((r) => r.outcome === 'refused' && r.code))).toEqual(new Set(['INSUFFICIENT_BALANCE']));

    expect(await walletAmounts(service.store, merchant)).toEqual([6_000n, 6_000n, 0n]);

    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    const mine = [...facts.orders.values()].filter((o) => o.order.merchantId === merchant);
    expect(mine.filter((o) => o.stage === 'accepted')).toHaveLength(50);
    expect(mine.filter((o) => o.stage === 'refused')).toHaveLength(150);
    await service.catchUp();
    expect(await checkReadModels(service.pool, facts)).toEqual([]);
    const rows = await service.pool.query(`select count(*)::int as n from rm_orders where merchant_id = $1 and stage = 'accepted'`, [merchant]);
    expect(rows.rows[0].n).toBe(50);
  });

  it('keeps the same outcome across many wallets at once', async () => {
    const merchants = await Promise.all(Array.from({ length: 8 }, () => openWallet(service.commands, 10n * 120n)));
    const results = await Promise.all(
      merchants.flatMap((m) => Array.from({ length: 25 }, (_, i) => service.commands.execute(new SubmitOrder(orderInput(m, `W-${i}`))))),
    );
    expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(80);
    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    await service.catchUp();
    expect(await checkReadModels(service.pool, facts)).toEqual([]);
  });
});

describe('two instances writing one hot wallet', () => {
  it('accept exactly what the funds allow, without errors, while both also settle orders', async () => {
    const { db, service: a, teardown } = await serviceOnFreshDatabase();
    const b = await startService(db);
    try {
      const merchant = await openWallet(a.commands, 300n * 120n);
      const results = await Promise.all(
        Array.from({ length: 600 }, async (_, i) => {
          const instance = i % 2 ? a : b;
          const result = await instance.commands.execute(new SubmitOrder(orderInput(merchant, `TWO-${i}`)));
          // Half the accepted orders are settled at once, by the other instance: more writers on the wallet.
          if (result.outcome === 'accepted' && i % 4 < 2) await (i % 2 ? b : a).commands.execute(new SettleOrder(result.order.order!.orderNo));
          return result;
        }),
      );
      const accepted = results.filter((r) => r.outcome === 'accepted').length;
      expect(accepted).toBeGreaterThanOrEqual(300);
      const facts = await checkEventInvariants(a.store);
      expect(facts.violations).toEqual([]);
      const [balance, frozen, available] = await walletAmounts(a.store, merchant);
      expect(balance - frozen).toBe(available);
      expect(available).toBeGreaterThanOrEqual(0n);
    } finally {
      await b.stop();
      await teardown();
    }
  });
});
