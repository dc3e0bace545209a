import { AppendOptions, EventStore, RecordedEvent, StreamAppend } from '../../src/ledger/ports/event-store.port';
import { systemClock } from '../../src/shared/clock';
import { DepositFunds } from '../../src/back-office/merchants/deposit-funds.command';
import { OrderWorkflow } from '../../src/ledger/order/order-workflow';
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
    let workflow: OrderWorkflow;
    beforeAll(() => {
      const store = storeFor(service.store);
      workflow = new OrderWorkflow(store, new WalletWriter(store), systemClock);
    });

    /** The order's events and the wallet's events about it. */
    async function logOf(merchant: string, orderNo: string) {
      const order = await service.store.readStream(orderStream(orderNo));
      const wallet = (await service.store.readStream(walletStream(merchant))).filter((e) => e.data.orderNo === orderNo);
      return { order, wallet, transactions: transactions([...order, ...wallet]) };
    }

    it('places, freezes and accepts a new order', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const result = await workflow.submit(orderInput(merchant, 'new-1'));
      if (result.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(result)}`);
      expect(result.order).toMatchObject({ stage: 'accepted', order: { attempt: 1, amount: 120n } });
      const log = await logOf(merchant, result.order.order!.orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
      expect(log.transactions).toBe(atOnce ? 1 : 3);
      expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 120n, 880n]);
    });

    it('places and refuses an order the wallet cannot pay, and accepts it once funded', async () => {
      const merchant = await openWallet(service.commands, 100n);
      const refused = await workflow.submit(orderInput(merchant, 'poor-1'));
      expect(refused).toMatchObject({ outcome: 'refused', code: 'INSUFFICIENT_BALANCE' });
      await service.commands.execute(new DepositFunds(merchant, 'top-up', 100n, 'test'));
      const again = await workflow.submit(orderInput(merchant, 'poor-1'));
      if (again.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(again)}`);
      expect(again.order.order).toMatchObject({ attempt: 2, amount: 120n });
      const log = await logOf(merchant, again.order.order!.orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderRefused', 'OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
    });

    it('answers concurrent submits of one new order with one acceptance, one freeze and duplicates', async () => {
      const merchant = await openWallet(service.commands, 10_000n);
      const results = await Promise.all(Array.from({ length: 8 }, () => workflow.submit(orderInput(merchant, 'race-1'))));
      expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(7);
      const orderNo = results.flatMap((r) => (r.outcome === 'accepted' ? [r.order.order!.orderNo] : []))[0];
      const log = await logOf(merchant, orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted']);
      expect(types(log.wallet)).toEqual(['FundsFrozen']);
      expect(await walletAmounts(service.store, merchant)).toEqual([10_000n, 120n, 9_880n]);
    });

    it('decides a delivery, deducts and completes the order; a repeat changes nothing', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const accepted = await workflow.submit(orderInput(merchant, 'done-1'));
      if (accepted.outcome !== 'accepted') throw new Error('not accepted');
      const orderNo = accepted.order.order!.orderNo;
      const succeeded = await workflow.decideOutcome(orderNo, { type: 'ConfirmDelivery', at: systemClock.now() });
      expect(succeeded.state.stage).toBe('succeeded');
      expect((await workflow.decideOutcome(orderNo, { type: 'ConfirmDelivery', at: systemClock.now() })).state.stage).toBe('succeeded');
      const log = await logOf(merchant, orderNo);
      expect(types(log.order)).toEqual(['OrderPlaced', 'OrderAccepted', 'OrderDeliveryConfirmed', 'OrderSucceeded']);
      expect(types(log.wallet)).toEqual(['FundsFrozen', 'FrozenFundsDeducted']);
      const settling = [...log.order.slice(2), log.wallet[1]];
      expect(transactions(settling)).toBe(atOnce ? 1 : 3);
      expect(await walletAmounts(service.store, merchant)).toEqual([880n, 0n, 880n]);
    });

    it('records a delivery failure, releases the funds and fails the order', async () => {
      const merchant = await openWallet(service.commands, 1_000n);
      const accepted = await workflow.submit(orderInput(merchant, 'fail-1'));
      if (accepted.outcome !== 'accepted') throw new Error('not accepted');
      const orderNo = accepted.order.order!.orderNo;
      const failed = await workflow.decideOutcome(orderNo, {
        type: 'RecordDeliveryFailure',
        failCode: 'INVALID_ACCOUNT',
        failReason: 'no such account',
        at: systemClock.now(),
      });
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
    const workflow = new OrderWorkflow(recording, new WalletWriter(recording), systemClock);
    const merchant = await openWallet(service.commands, 1_000n);
    const accepted = await workflow.submit(orderInput(merchant, 'lane-1'));
    if (accepted.outcome !== 'accepted') throw new Error('not accepted');
    await workflow.decideOutcome(accepted.order.order!.orderNo, { type: 'ConfirmDelivery', at: systemClock.now() });
    expect(asked).toEqual([
      { events: ['FundsFrozen', 'OrderPlaced', 'OrderAccepted'], replyWaits: true },
      { events: ['FrozenFundsDeducted', 'OrderDeliveryConfirmed', 'OrderSucceeded'], replyWaits: false },
    ]);
  });
});
