import { CommandBus } from '@nestjs/cqrs';
import { AdjustWallet } from '../../src/ledger/commands/adjust-wallet/adjust-wallet.command';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { ResolveOrder } from '../../src/ledger/commands/resolve-order/resolve-order.command';
import { SettleOrder } from '../../src/ledger/commands/settle-order/settle-order.command';
import { MarkResultUnknown } from '../../src/ledger/commands/mark-result-unknown/mark-result-unknown.command';
import { ReleaseFunds } from '../../src/ledger/commands/release-funds/release-funds.command';
import { RecordUpstreamAttempt } from '../../src/ledger/commands/record-upstream-attempt/record-upstream-attempt.command';
import { loadAggregate } from '../../src/ledger/command-handling';
import { orderDecider } from '../../src/ledger/order/order.decider';
import { orderStream, walletStream } from '../../src/ledger/streams';
import { WalletAdjustment } from '../../src/ledger/wallet/wallet.decider';
import { SubmitOrder } from '../../src/ledger/commands/submit-order/submit-order.command';
import { CommandRefusedError } from '../../src/shared/command-refused';
import { checkEventInvariants, checkReadModels } from '../support/invariants';
import { openWallet, orderInput, walletAmounts } from '../support/fixtures';
import { serviceOnFreshDatabase, RunningService } from '../support/service';

describe('ledger commands against the running service', () => {
  let service: RunningService;
  let commands: CommandBus;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    commands = service.commands;
  });
  afterAll(async () => {
    const facts = await checkEventInvariants(service.store);
    expect(facts.violations).toEqual([]);
    await service.catchUp();
    expect(await checkReadModels(service.pool, facts)).toEqual([]);
    await teardown();
  });

  describe('DepositFunds', () => {
    it('is idempotent on its reference', async () => {
      const merchant = await openWallet(commands, 0n);
      const first = await commands.execute(new DepositFunds(merchant, 'dep-1', 10_000n, 'ops'));
      const again = await commands.execute(new DepositFunds(merchant, 'dep-1', 10_000n, 'ops'));
      expect(first.balance).toBe(10_000n);
      expect(again.balance).toBe(10_000n);
      await expect(commands.execute(new DepositFunds(merchant, 'dep-1', 5n, 'ops'))).rejects.toMatchObject({
        code: 'DEPOSIT_REFERENCE_CONFLICT',
      });
    });

    it('refuses a wallet that was never opened, and opening twice', async () => {
      await expect(commands.execute(new DepositFunds('m-never-opened', 'x', 1n, 'ops'))).rejects.toBeInstanceOf(CommandRefusedError);
      const merchant = await openWallet(commands, 0n);
      await expect(commands.execute(new OpenWallet(merchant, 'USD'))).rejects.toMatchObject({ code: 'WALLET_ALREADY_OPEN' });
    });
  });

  describe('AdjustWallet', () => {
    const correction = (reference: string, direction: 'credit' | 'debit', amount: bigint, orderNo?: string): WalletAdjustment => ({
      reference,
      direction,
      amount,
      reason: direction === 'credit' ? 'REPORT_SAYS_FAILED' : 'REPORT_SAYS_DELIVERED',
      note: 'the upstream report disagrees',
      ...(orderNo === undefined ? {} : { orderNo }),
    });

    it('credits and debits the balance of a wallet whose order became final, once per order and reason', async () => {
      const merchant = await openWallet(commands, 1_000n);
      const accepted = await commands.execute(new SubmitOrder(orderInput(merchant, 'ADJ-1')));
      if (accepted.outcome !== 'accepted') throw new Error('not accepted');
      const orderNo = accepted.order.order.orderNo;
      await commands.execute(new SettleOrder(orderNo));
      expect(await walletAmounts(service.store, merchant)).toEqual([880n, 0n, 880n]);
      // The report says the upstream failed it: the deduction is handed back.
      const credited = await commands.execute(new AdjustWallet(merchant, correction('adj-1', 'credit', 120n, orderNo), 'finance'));
      expect(credited).toEqual({ merchantId: merchant, balance: 1_000n, frozen: 0n, available: 1_000n });
      // The same adjustment again changes nothing; another for the same order and reason is refused.
      expect((await commands.execute(new AdjustWallet(merchant, correction('adj-1', 'credit', 120n, orderNo), 'finance'))).balance).toBe(1_000n);
      await expect(commands.execute(new AdjustWallet(merchant, correction('adj-2', 'credit', 120n, orderNo), 'finance'))).rejects.toMatchObject({
        code: 'ORDER_ALREADY_ADJUSTED',
      });
      await expect(commands.execute(new AdjustWallet(merchant, correction('adj-1', 'debit', 120n, orderNo), 'finance'))).rejects.toMatchObject({
        code: 'ADJUSTMENT_REFERENCE_CONFLICT',
      });
      const debited = await commands.execute(new AdjustWallet(merchant, correction('adj-3', 'debit', 300n), 'finance'));
      expect(debited.balance).toBe(700n);
      const events = (await service.store.readStream(walletStream(merchant))).filter((e) => e.type === 'WalletAdjusted');
      expect(events.map((e) => e.data)).toEqual([
        expect.objectContaining({ reference: 'adj-1', direction: 'credit', amount: '120', orderNo, by: 'finance' }),
        expect.not.objectContaining({ orderNo: expect.anything() }),
      ]);
    });

    it('never debits into the funds frozen for orders in flight', async () => {
      const merchant = await openWallet(commands, 200n);
      expect((await commands.execute(new SubmitOrder(orderInput(merchant, 'ADJ-HELD')))).outcome).toBe('accepted');
      await expect(commands.execute(new AdjustWallet(merchant, correction('adj-held', 'debit', 81n), 'finance'))).rejects.toMatchObject({
        code: 'INSUFFICIENT_BALANCE',
      });
      expect((await commands.execute(new AdjustWallet(merchant, correction('adj-held', 'debit', 80n), 'finance'))).available).toBe(0n);
      expect(await walletAmounts(service.store, merchant)).toEqual([120n, 120n, 0n]);
    });
  });

  describe('SubmitOrder', () => {
    it('freezes the amount and returns the accepted order', async () => {
      const merchant = await openWallet(commands, 1_000n);
      const result = await commands.execute(new SubmitOrder(orderInput(merchant, 'A-1')));
      expect(result).toMatchObject({ outcome: 'accepted', order: { stage: 'accepted', order: { amount: 120n, attempt: 1 } } });
      expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 120n, 880n]);
    });

    it('returns the same order as a duplicate for the same target, in any field order', async () => {
      const merchant = await openWallet(commands, 1_000n);
      const first = await commands.execute(new SubmitOrder(orderInput(merchant, 'D-1', { accountFields: { a: '1', b: '2' } })));
      const again = await commands.execute(new SubmitOrder(orderInput(merchant, 'D-1', { accountFields: { b: '2', a: '1' } })));
      expect(again.outcome).toBe('duplicate');
      if (first.outcome === 'refused' || again.outcome === 'refused') throw new Error('refused');
      expect(again.order.order!.orderNo).toBe(first.order.order!.orderNo);
    });

    it('refuses the same out_trade_no for a different target', async () => {
      const merchant = await openWallet(commands, 1_000n);
      await commands.execute(new SubmitOrder(orderInput(merchant, 'C-1')));
      const conflict = await commands.execute(new SubmitOrder(orderInput(merchant, 'C-1', { accountId: '999' })));
      expect(conflict).toMatchObject({ outcome: 'refused', code: 'OUT_TRADE_NO_CONFLICT' });
    });

    it('refuses an order beyond the available balance, and accepts the same out_trade_no once funded', async () => {
      const merchant = await openWallet(commands, 100n);
      expect(await commands.execute(new SubmitOrder(orderInput(merchant, 'R-1')))).toMatchObject({
        outcome: 'refused',
        code: 'INSUFFICIENT_BALANCE',
      });
      await commands.execute(new DepositFunds(merchant, 'top-up', 100n, 'ops'));
      const retried = await commands.execute(new SubmitOrder(orderInput(merchant, 'R-1', { accountId: 'other' })));
      expect(retried).toMatchObject({ outcome: 'accepted', order: { order: { attempt: 2, accountId: 'other' } } });
    });

    it('gives one acceptance and duplicates for concurrent submits of one order', async () => {
      const merchant = await openWallet(commands, 1_000n);
      const results = await Promise.all(Array.from({ length: 20 }, () => commands.execute(new SubmitOrder(orderInput(merchant, 'S-1')))));
      expect(results.filter((r) => r.outcome === 'accepted')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'duplicate')).toHaveLength(19);
      expect(await walletAmounts(service.store, merchant)).toEqual([1_000n, 120n, 880n]);
    });

    it('lets one of several concurrent targets win; the others conflict', async () => {
      const merchant = await openWallet(commands, 10_000n);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => commands.execute(new SubmitOrder(orderInput(merchant, 'T-1', { accountId: `acct-${i}` })))),
      );
      const accepted = results.filter((r) => r.outcome === 'accepted');
      const conflicts = results.filter((r) => r.outcome === 'refused' && r.code === 'OUT_TRADE_NO_CONFLICT');
      expect(accepted).toHaveLength(1);
      expect(conflicts).toHaveLength(9);
      expect(await walletAmounts(service.store, merchant)).toEqual([10_000n, 120n, 9_880n]);
    });
  });

  describe('outcomes', () => {
    async function acceptedOrder(outTradeNo: string) {
      const merchant = await openWallet(commands, 1_000n);
      const result = await commands.execute(new SubmitOrder(orderInput(merchant, outTradeNo)));
      if (result.outcome !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(result)}`);
      return { merchant, orderNo: result.order.order!.orderNo };
    }
    const wallet = (merchant: string) => walletAmounts(service.store, merchant);

    it('SettleOrder deducts once and succeeds; repeating it changes nothing', async () => {
      const { merchant, orderNo } = await acceptedOrder('O-1');
      expect((await commands.execute(new SettleOrder(orderNo))).state.stage).toBe('succeeded');
      expect((await commands.execute(new SettleOrder(orderNo))).state.stage).toBe('succeeded');
      expect(await wallet(merchant)).toEqual([880n, 0n, 880n]);
      await expect(commands.execute(new ReleaseFunds(orderNo, 'UPSTREAM_REJECTED', 'no'))).rejects.toMatchObject({
        code: 'ORDER_ALREADY_FINAL',
      });
    });

    it('ReleaseFunds releases once and fails with the fail code', async () => {
      const { merchant, orderNo } = await acceptedOrder('O-2');
      const failed = await commands.execute(new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'The account does not exist'));
      expect(failed.state).toMatchObject({ stage: 'failed', failCode: 'INVALID_ACCOUNT' });
      expect((await commands.execute(new ReleaseFunds(orderNo, 'INVALID_ACCOUNT', 'again'))).state.stage).toBe('failed');
      expect(await wallet(merchant)).toEqual([1_000n, 0n, 1_000n]);
      await expect(commands.execute(new SettleOrder(orderNo))).rejects.toMatchObject({ code: 'ORDER_ALREADY_FINAL' });
    });

    it('RecordUpstreamAttempt on the order as its sender read it, and the outcome on the order as the attempt left it: decided without reading it again when that is current, read again and refused when the order has moved on since', async () => {
      const read = (orderNo: string) => loadAggregate(service.store, orderStream(orderNo), orderDecider);
      const reads = jest.spyOn(service.store, 'readStream');
      const readsOf = (orderNo: string) => reads.mock.calls.filter(([stream]) => stream === orderStream(orderNo)).length;
      try {
        const current = await acceptedOrder('O-7');
        const known = await read(current.orderNo);
        reads.mockClear();
        const sent = await commands.execute(new RecordUpstreamAttempt(current.orderNo, known));
        expect(sent.state.stage).toBe('sent');
        // The result carries the stream's revision: the outcome after it passes it on and reads nothing either.
        const succeeded = await commands.execute(new SettleOrder(current.orderNo, sent));
        expect(succeeded.state.stage).toBe('succeeded');
        expect(readsOf(current.orderNo)).toBe(0);
        expect(succeeded.revision).toBe((await service.store.readStream(orderStream(current.orderNo))).at(-1)!.revision);

        const moved = await acceptedOrder('O-8');
        const stale = await read(moved.orderNo);
        await commands.execute(new ReleaseFunds(moved.orderNo, 'INVALID_ACCOUNT', 'The account does not exist'));
        const before = await service.store.readStream(orderStream(moved.orderNo));
        reads.mockClear();
        // The stale read's revision no longer holds: the order is read again, and a failed order takes no attempt.
        await expect(commands.execute(new RecordUpstreamAttempt(moved.orderNo, stale))).rejects.toMatchObject({ code: 'ORDER_ALREADY_FINAL' });
        expect(readsOf(moved.orderNo)).toBeGreaterThan(0);
        expect(await service.store.readStream(orderStream(moved.orderNo))).toEqual(before);
        expect(await wallet(moved.merchant)).toEqual([1_000n, 0n, 1_000n]);
      } finally {
        reads.mockRestore();
      }
    });

    it('an unknown result keeps the money frozen until staff resolve it', async () => {
      const { merchant, orderNo } = await acceptedOrder('O-3');
      expect((await commands.execute(new MarkResultUnknown(orderNo, 'timeout after sending'))).state.stage).toBe('unknown');
      await expect(commands.execute(new ReleaseFunds(orderNo, 'UPSTREAM_REJECTED', 'late'))).rejects.toMatchObject({
        code: 'RESOLUTION_REQUIRED',
      });
      await expect(commands.execute(new SettleOrder(orderNo))).rejects.toMatchObject({ code: 'RESOLUTION_REQUIRED' });
      expect(await wallet(merchant)).toEqual([1_000n, 120n, 880n]);

      const resolved = await commands.execute(new ResolveOrder(orderNo, 'failed', 'staff-1', 'upstream confirmed no delivery'));
      expect(resolved.state).toMatchObject({ stage: 'failed', failCode: 'RESOLVED_FAILED' });
      await expect(commands.execute(new ResolveOrder(orderNo, 'success', 'staff-1', 'again'))).rejects.toMatchObject({
        code: 'ORDER_ALREADY_FINAL',
      });
      expect(await wallet(merchant)).toEqual([1_000n, 0n, 1_000n]);
    });

    it('resolving an unknown order as success deducts', async () => {
      const { merchant, orderNo } = await acceptedOrder('O-4');
      await commands.execute(new MarkResultUnknown(orderNo, 'malformed reply'));
      expect((await commands.execute(new ResolveOrder(orderNo, 'success', 'staff-2', 'provider report'))).state.stage).toBe('succeeded');
      expect(await wallet(merchant)).toEqual([880n, 0n, 880n]);
    });

    it('refuses to resolve an order that is not awaiting reconciliation', async () => {
      const { orderNo } = await acceptedOrder('O-5');
      await expect(commands.execute(new ResolveOrder(orderNo, 'success', 'staff', 'n'))).rejects.toMatchObject({
        code: 'ORDER_NOT_IN_RECONCILIATION',
      });
    });
  });
});
