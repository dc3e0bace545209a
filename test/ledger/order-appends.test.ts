import { AppendOptions, EventStore, RecordedEvent, StreamAppend } from '../../src/ledger/ports/event-store.port';
import { systemClock } from '../../src/shared/clock';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { ReleaseFundsHandler } from '../../src/ledger/commands/release-funds/release-funds.handler';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { SettleOrderHandler } from '../../src/ledger/commands/settle-order/settle-order.handler';
import { SubmitOrder, SubmitOrderInput } from '../../src/ledger/commands/submit-order/submit-order.command';
import { SubmitOrderHandler } from '../../src/ledger/commands/submit-order/submit-order.handler';
import { orderAppendsFor } from '../../src/ledger/order/order-appends';
import { DeliveryFailCode } from '../../src/ledger/order/order.decider';
import { OrderOutcomes } from '../../src/ledger/order/order-outcomes';
import { OrderSteps } from '../../src/ledger/order/order-steps';
import { orderStream, walletStream } from '../../src/ledger/streams';
import { WalletWriter } from '../../src/ledger/wallet/wallet-writer';
import { openWallet, orderInput, walletAmounts } from '../support/fixtures';
import { checkEventInvariants } from '../support/invariants';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

/** The real store without atomic appends to several streams, as EventStoreDB is. */
function oneStreamAtATime(store: EventStore): EventStore {
  return new Proxy(store, {
    get: (target, property, receiver) => (property === 'appendAtomically' ? undefined : Reflect.get(target, property, receiver)),
  });
}

/** The ledger's order commands on `store`, as LedgerModule wires them. */
function ledgerOn(store: EventStore) {
  const wallets = new WalletWriter(store);
  const steps = new OrderSteps(store, wallets, systemClock);
  const appends = orderAppendsFor(store, wallets, steps, systemClock);
  const outcomes = new OrderOutcomes(store, appends, steps);
  const submit = new SubmitOrderHandler(store, appends, steps, systemClock);
  const settle = new SettleOrderHandler(outcomes, systemClock);
  const release = new ReleaseFundsHandler(outcomes, systemClock);
  return {
    submit: (input: SubmitOrderInput) => submit.execute(new SubmitOrder(input)),
    settle: (orderNo: string) => settle.execute(new SettleOrder(orderNo)),
    release: (orderNo: string, failCode: DeliveryFailCode, failReason: string) => release.execute(new ReleaseFunds(orderNo, failCode, failReason)),
  };
}

const types = (events: readonly RecordedEvent[]) => events.map((e) => e.type);
const transactions = (events: readonly RecordedEvent[]) => new Set(events.map((e) => e.position.commit)).size;

describe('an order and its wallet movements in the log', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
  });
  afterAll(async () => {
    expect((await checkEventInvariants(service.store)).violations).toEqual([]);
    await teardown();
  });

  describe.each([
    ['at once, in one transaction (PostgreSQL)', (store: EventStore) => store, true],
    ['step by step (a store that appends one stream at a time)', oneStreamAtATime, false],
  ] as const)('%s', (_, storeFor, atOnce) => {
    let ledger: ReturnType<typeof ledgerOn>;
    beforeAll(() => {
      ledger = ledgerOn(storeFor(service.store));
    });

    /** The order's events and the wallet's events about it. */
    async function logOf(merchant: string, orderNo: string) {
      const order = await service.store.readStream(orderStream(orderNo));
      const wallet = (await service.store.readStream(walletStream(merchant))).filter((e) => e.data.orderNo === orderNo);
      return { order, wallet, transactions: transactions([...order, ...wallet]) };
    }

    it('places, freezes and accepts a new order', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const result = await ledger.submit(orderInput(merchant, 'new-1'));
      if (result.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(result)}`);
      expect(result.order).toMatchObject({ stage: 'accepted', order: { attempt: 1, amount: 120n } });
      const log = await logOf(merchant, result.order.order.orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
      expect(log.transactions).toBe(atOnce ? 1 : 3);
      expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 120n, 880n]);
    });

    it('places and refuses an order the wallet cannot pay, and accepts it once funded', async () => {
      const merchant = await openWallet(service.commands, 100n);
      const refused = await ledger.submit(orderInput(merchant, 'poor-1'));
      expect(refused).toMatchObject({ outcome: 'refused', code: 'INSUFFICIENT_BALANCE' });
      await service.commands.execute(new DepositFunds(merchant, 'top-up', 100n, 'test'));
      const again = await ledger.submit(orderInput(merchant, 'poor-1'));
      if (again.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(again)}`);
      expect(again.order.order).toMatchObject({ attempt: 2, amount: 120n });
      const log = await logOf(merchant, again.order.order.orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderRefused', 'OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
    });

    it('answers concurrent submits of one new order with one acceptance, one freeze and duplicates', async () => {
      const merchant = await openWallet(service.commands, 10_000n);
      const results = await Promise.all(Array.from({ length: 8 }, () => ledger.submit(orderInput(merchant, 'race-1'))));
      expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(7);
      const orderNo = results.flatMap((r) => (r.outcome === 'accepted' ? [r.order.order.orderNo] : []))[0];
      const log = await logOf(merchant, orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
      expect(await walletAmounts(service.store, merchant)).toEqual([10_000n, 120n, 9_880n]);
    });

    it('decides a delivery, deducts and completes the order; a repeat changes nothing', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const accepted = await ledger.submit(orderInput(merchant, 'done-1'));
      if (accepted.outcome !== 'accepted') throw new Error('not accepted');
      const orderNo = accepted.order.order.orderNo;
      const succeeded = await ledger.settle(orderNo);
      expect(succeeded.state.stage).toBe('succeeded');
      expect((await ledger.settle(orderNo)).state.stage).toBe('succeeded');
      const log = await logOf(merchant, orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted', 'OrderDeliveryConfirmed', 'OrderSucceeded']);
      expect(types(log.wallet)).toEqual(['FundsFrozen', 'FrozenFundsDeducted']);
      const settling = [...log.order.slice(2), log.wallet[1]];
      expect(transactions(settling)).toBe(atOnce ? 1 : 3);
      expect(await walletAmounts(service.store, merchant)).toEqual([880n, 0n, 880n]);
    });

    it('records a delivery failure, releases the funds and fails the order', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const accepted = await ledger.submit(orderInput(merchant, 'fail-1'));
      if (accepted.outcome !== 'accepted') throw new Error('not accepted');
      const orderNo = accepted.order.order.orderNo;
      const failed = await ledger.release(orderNo, 'INVALID_ACCOUNT', 'no such account');
      expect(failed.state).toMatchObject({ stage: 'failed', failCode: 'INVALID_ACCOUNT' });
      const log = await logOf(merchant, orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted', 'OrderDeliveryFailed', 'OrderFailed']);
      expect(types(log.wallet)).toEqual(['FundsFrozen', 'FrozenFundsReleased']);
      expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 0n, 1_000n]);
    });
  });

  it("asks the store to let a submit's append pass the others, and not a settlement's", async () => {
    const asked: Array<{ events: string[]; replyWaits: boolean }> = [];
    const recording = new Proxy(service.store, {
      get: (target, property, receiver) =>
        property === 'appendAtomically'
          ? (appends: StreamAppend[], options?: AppendOptions) => {
              asked.push({ events: appends.flatMap((a) => a.events.map((e) => e.type)), replyWaits: options?.replyWaits === true });
              return target.appendAtomically!(appends, options);
            }
          : Reflect.get(target, property, receiver),
    });
    const ledger = ledgerOn(recording);
    const merchant = await openWallet(service.commands, 1_000n);
    const accepted = await ledger.submit(orderInput(merchant, 'lane-1'));
    if (accepted.outcome !== 'accepted') throw new Error('not accepted');
    await ledger.settle(accepted.order.order.orderNo);
    expect(asked).toEqual([
      { events: ['FundsFrozen', 'OrderPlaced', 'OrderAccepted'], replyWaits: true },
      { events: ['FrozenFundsDeducted', 'OrderDeliveryConfirmed', 'OrderSucceeded'], replyWaits: false },
    ]);
  });
});
