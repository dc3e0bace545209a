import { ANY } from '../../src/ledger/ports/event-store.port';
import { loadAggregate } from '../../src/ledger/command-handling';
import { encodeEvent } from '../../src/ledger/event-codec';
import { deriveOrderNo } from '../../src/ledger/order/order-number';
import { OrderEvent, orderDecider, PlacedOrder } from '../../src/ledger/order/order.decider';
import { orderStream, walletStream } from '../../src/ledger/streams';
import { WalletEvent } from '../../src/ledger/wallet/wallet.decider';
import { isoTimestamp } from '../../src/shared/clock';
import { openWallet, walletAmounts } from '../support/fixtures';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/**
 * Each case writes the events a crash could leave behind (the first appends
 * of a step, never the rest), then one sweep of the process manager must
 * finish every order without moving money twice.
 */
describe('process manager: orders a crash left between two appends', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  const at = isoTimestamp(new Date(Date.now() - 60_000));

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => teardown());

  const placed = (merchantId: string, outTradeNo: string, amount = 120n, attempt = 1): PlacedOrder => ({
    orderNo: deriveOrderNo(merchantId, outTradeNo),
    merchantId,
    outTradeNo,
    skuId: 'mlbb-86',
    accountId: '555',
    accountFields: {},
    amount,
    currency: 'USD',
    attempt,
    at,
  });
  const writeOrder = (order: PlacedOrder, ...events: OrderEvent[]) =>
    service.store.append(
      orderStream(order.orderNo),
      events.map((e) => encodeEvent(e)),
      ANY,
    );
  // Behind the wallet writer's back, as another instance would write: its cached wallet goes stale, and a conflict reloads it.
  const writeWallet = (merchantId: string, ...events: WalletEvent[]) =>
    service.store.append(
      walletStream(merchantId),
      events.map((e) => encodeEvent(e)),
      ANY,
    );
  const hold = (o: PlacedOrder) => ({ orderNo: o.orderNo, attempt: o.attempt, amount: o.amount, at });
  const stageOf = async (o: PlacedOrder) => (await loadAggregate(service.store, orderStream(o.orderNo), orderDecider)).state;

  it('finishes, refuses or refunds each half-done order exactly once', async () => {
    const m = await openWallet(service.commands, 1_000n);
    const poor = await openWallet(service.commands, 50n);

    const placedOnly = placed(m, 'placed-only');
    await writeOrder(placedOnly, { type: 'OrderPlaced', data: placedOnly });

    const frozenNotAccepted = placed(m, 'frozen-not-accepted');
    await writeOrder(frozenNotAccepted, { type: 'OrderPlaced', data: frozenNotAccepted });
    await writeWallet(m, { type: 'FundsFrozen', data: hold(frozenNotAccepted) });

    const unaffordable = placed(poor, 'unaffordable');
    await writeOrder(unaffordable, { type: 'OrderPlaced', data: unaffordable });

    const confirmedNotDeducted = placed(m, 'confirmed-not-deducted');
    await writeOrder(
      confirmedNotDeducted,
      { type: 'OrderPlaced', data: confirmedNotDeducted },
      { type: 'OrderAccepted', data: { attempt: 1, at } },
      { type: 'OrderDeliveryConfirmed', data: { at } },
    );
    await writeWallet(m, { type: 'FundsFrozen', data: hold(confirmedNotDeducted) });

    const deductedNotFinal = placed(m, 'deducted-not-final');
    await writeOrder(
      deductedNotFinal,
      { type: 'OrderPlaced', data: deductedNotFinal },
      { type: 'OrderAccepted', data: { attempt: 1, at } },
      { type: 'OrderDeliveryConfirmed', data: { at } },
    );
    await writeWallet(m, { type: 'FundsFrozen', data: hold(deductedNotFinal) }, { type: 'FrozenFundsDeducted', data: hold(deductedNotFinal) });

    const failedNotReleased = placed(m, 'failed-not-released');
    await writeOrder(
      failedNotReleased,
      { type: 'OrderPlaced', data: failedNotReleased },
      { type: 'OrderAccepted', data: { attempt: 1, at } },
      { type: 'OrderDeliveryFailed', data: { failCode: 'INVALID_ACCOUNT', failReason: 'no such account', at } },
    );
    await writeWallet(m, { type: 'FundsFrozen', data: hold(failedNotReleased) });

    const resolvedNotReleased = placed(m, 'resolved-not-released');
    await writeOrder(
      resolvedNotReleased,
      { type: 'OrderPlaced', data: resolvedNotReleased },
      { type: 'OrderAccepted', data: { attempt: 1, at } },
      { type: 'OrderResultUnknown', data: { reason: 'timeout', at } },
      { type: 'OrderResolved', data: { outcome: 'failed', resolvedBy: 'staff-1', note: 'provider says no', at } },
    );
    await writeWallet(m, { type: 'FundsFrozen', data: hold(resolvedNotReleased) });

    // A duplicate request froze for attempt 1 after the first request refused it, then died.
    const strayHold = placed(m, 'stray-hold');
    await writeOrder(strayHold, { type: 'OrderPlaced', data: strayHold }, { type: 'OrderRefused', data: { attempt: 1, code: 'INSUFFICIENT_BALANCE', at } });
    await writeWallet(m, { type: 'FundsFrozen', data: hold(strayHold) });

    const before = await checkEventInvariants(service.store);
    // Seven orders half-done; two holds not (yet) backed by an accepted order.
    expect(before.violations.filter((v) => v.includes('half-done'))).toHaveLength(7);
    expect(before.violations.filter((v) => v.includes('stray hold'))).toHaveLength(2);
    expect(before.violations).toHaveLength(9);

    await service.catchUp();
    const report = await service.recovery.sweep(0);
    expect(report).toEqual({ ordersAdvanced: 7, holdsReleased: 1 });

    expect((await stageOf(placedOnly)).stage).toBe('accepted');
    expect((await stageOf(frozenNotAccepted)).stage).toBe('accepted');
    expect(await stageOf(unaffordable)).toMatchObject({ stage: 'refused', refusalCode: 'INSUFFICIENT_BALANCE' });
    expect((await stageOf(confirmedNotDeducted)).stage).toBe('succeeded');
    expect((await stageOf(deductedNotFinal)).stage).toBe('succeeded');
    expect(await stageOf(failedNotReleased)).toMatchObject({ stage: 'failed', failCode: 'INVALID_ACCOUNT' });
    expect(await stageOf(resolvedNotReleased)).toMatchObject({ stage: 'failed', failCode: 'RESOLVED_FAILED' });
    expect((await stageOf(strayHold)).stage).toBe('refused');

    // 1000 deposited; two deductions; two orders (placed-only, frozen-not-accepted) still frozen.
    expect(await walletAmounts(service.store, m)).toEqual([760n, 240n, 520n]);
    expect(await walletAmounts(service.store, poor)).toEqual([50n, 0n, 50n]);

    const after = await checkEventInvariants(service.store);
    expect(after.violations).toEqual([]);
    await service.catchUp();
    expect(await checkReadModels(service.pool, after)).toEqual([]);

    // A second sweep finds nothing left to do.
    expect(await service.recovery.sweep(0)).toEqual({ ordersAdvanced: 0, holdsReleased: 0 });
  });

  it('leaves recent orders to the request still working on them', async () => {
    const m = await openWallet(service.commands, 1_000n);
    const fresh = { ...placed(m, 'in-flight'), at: isoTimestamp() };
    await writeOrder(fresh, { type: 'OrderPlaced', data: fresh });
    await service.catchUp();
    expect(await service.recovery.sweep(60_000)).toEqual({ ordersAdvanced: 0, holdsReleased: 0 });
    expect((await stageOf(fresh)).stage).toBe('placed');
    await service.recovery.sweep(0);
    expect((await stageOf(fresh)).stage).toBe('accepted');
  });
});
