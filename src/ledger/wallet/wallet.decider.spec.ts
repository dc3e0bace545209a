import { fold } from '../../shared/decider';
import { specify } from '../../../test/support/decider-specification';
import { Minor } from '../../shared/money';
import {
  amountsOf,
  availableBalance,
  holdKey,
  merchantHoldKey,
  OpenedWallet,
  openedWallet,
  settleWallet,
  WalletCommand,
  walletDecider,
  WalletEvent,
  WalletRefusalCode,
  WalletState,
} from './wallet.decider';
import { decideBatch } from './wallet-batch';

const AT = '2026-11-22T10:00:00.000+00:00';
const LATER = '2026-11-22T10:05:00.000+00:00';
const MERCHANT = 'M-1001';
const OPERATOR = 'ops@example.com';

// Events.
const opened = (): WalletEvent => ({ type: 'WalletOpened', data: { merchantId: MERCHANT, currency: 'CNY', at: AT } });
const deposited = (amount: Minor, reference = 'DEP-1'): WalletEvent => ({
  type: 'FundsDeposited',
  data: { reference, amount, by: OPERATOR, at: AT },
});
const frozen = (orderNo: string, amount: Minor, attempt = 1): WalletEvent => ({
  type: 'FundsFrozen',
  data: { orderNo, attempt, amount, at: AT },
});
const deducted = (orderNo: string, amount: Minor, attempt = 1): WalletEvent => ({
  type: 'FrozenFundsDeducted',
  data: { orderNo, attempt, amount, at: LATER },
});
const released = (orderNo: string, amount: Minor, attempt = 1, reason = 'ORDER_FAILED'): WalletEvent => ({
  type: 'FrozenFundsReleased',
  data: { orderNo, attempt, amount, reason, at: LATER },
});

type AdjustmentTerms = { direction: 'credit' | 'debit'; amount: Minor; reference?: string; reason?: string; orderNo?: string };
const adjusted = ({ direction, amount, reference = 'ADJ-1', reason = 'UPSTREAM_REPORT', orderNo }: AdjustmentTerms): WalletEvent => ({
  type: 'WalletAdjusted',
  data: { reference, direction, amount, reason, note: 'the report says otherwise', ...(orderNo === undefined ? {} : { orderNo }), by: OPERATOR, at: LATER },
});

// Commands.
const adjust = ({ direction, amount, reference = 'ADJ-1', reason = 'UPSTREAM_REPORT', orderNo }: AdjustmentTerms): WalletCommand => ({
  type: 'AdjustWallet',
  reference,
  direction,
  amount,
  reason,
  note: 'the report says otherwise',
  ...(orderNo === undefined ? {} : { orderNo }),
  by: OPERATOR,
  at: LATER,
});
const openWallet = (): WalletCommand => ({ type: 'OpenWallet', merchantId: MERCHANT, currency: 'CNY', at: AT });
const deposit = (amount: Minor, reference = 'DEP-1'): WalletCommand => ({ type: 'DepositFunds', reference, amount, by: OPERATOR, at: AT });
const freeze = (orderNo: string, amount: Minor, attempt = 1): WalletCommand => ({ type: 'FreezeFunds', orderNo, attempt, amount, at: AT });
const deduct = (orderNo: string, attempt = 1): WalletCommand => ({ type: 'DeductFrozenFunds', orderNo, attempt, at: LATER });
const release = (orderNo: string, attempt = 1, reason = 'ORDER_FAILED'): WalletCommand => ({
  type: 'ReleaseFrozenFunds',
  orderNo,
  attempt,
  reason,
  at: LATER,
});

// Histories.
const funded = (amount: Minor = 100n): WalletEvent[] => [opened(), deposited(amount)];
const holding = (orderNo: string, amount: Minor, balance: Minor = 100n): WalletEvent[] => [...funded(balance), frozen(orderNo, amount)];

const wallet = specify(walletDecider);
const stateAfter = (history: WalletEvent[]): OpenedWallet => openedWallet(fold(walletDecider, history));

type RefusalCase = [name: string, history: WalletEvent[], command: WalletCommand, code: WalletRefusalCode];

/** Every refusal the wallet can return, and every state that leads to it. */
const refusals: RefusalCase[] = [
  ['deposit on an unopened wallet', [], deposit(100n), 'WALLET_NOT_OPEN'],
  ['freeze on an unopened wallet', [], freeze('ORD-1', 10n), 'WALLET_NOT_OPEN'],
  ['deduct on an unopened wallet', [], deduct('ORD-1'), 'WALLET_NOT_OPEN'],
  ['release on an unopened wallet', [], release('ORD-1'), 'WALLET_NOT_OPEN'],

  ['open an open wallet', [opened()], openWallet(), 'WALLET_ALREADY_OPEN'],
  ['open an open wallet with activity', holding('ORD-1', 40n), openWallet(), 'WALLET_ALREADY_OPEN'],

  ['zero deposit', [opened()], deposit(0n), 'INVALID_AMOUNT'],
  ['negative deposit', [opened()], deposit(-1n), 'INVALID_AMOUNT'],
  ['zero freeze', funded(), freeze('ORD-1', 0n), 'INVALID_AMOUNT'],
  ['negative freeze', funded(), freeze('ORD-1', -100n), 'INVALID_AMOUNT'],

  ['deposit reference reused for a larger amount', funded(100n), deposit(101n), 'DEPOSIT_REFERENCE_CONFLICT'],
  ['deposit reference reused for a smaller amount', funded(100n), deposit(99n), 'DEPOSIT_REFERENCE_CONFLICT'],
  [
    'deposit reference reused after other deposits',
    [...funded(100n), deposited(50n, 'DEP-2'), deposited(70n, 'DEP-3')],
    deposit(50n, 'DEP-1'),
    'DEPOSIT_REFERENCE_CONFLICT',
  ],

  ['freeze on an empty wallet', [opened()], freeze('ORD-1', 1n), 'INSUFFICIENT_BALANCE'],
  ['freeze one cent more than the balance', funded(100n), freeze('ORD-1', 101n), 'INSUFFICIENT_BALANCE'],
  ['freeze when frozen funds make available too low', holding('ORD-1', 80n, 100n), freeze('ORD-2', 30n), 'INSUFFICIENT_BALANCE'],
  ['freeze one cent more than available beside a hold', holding('ORD-1', 40n, 100n), freeze('ORD-2', 61n), 'INSUFFICIENT_BALANCE'],
  ['freeze after a deduction emptied the balance', [...holding('ORD-1', 100n, 100n), deducted('ORD-1', 100n)], freeze('ORD-2', 1n), 'INSUFFICIENT_BALANCE'],

  ['freeze the same order twice while held', holding('ORD-1', 40n), freeze('ORD-1', 40n), 'ALREADY_FROZEN'],
  ['freeze the same order again for another amount', holding('ORD-1', 40n), freeze('ORD-1', 10n), 'ALREADY_FROZEN'],
  ['freeze an order again after its deduction', [...holding('ORD-1', 40n), deducted('ORD-1', 40n)], freeze('ORD-1', 40n), 'ALREADY_FROZEN'],
  ['freeze an order again after its release', [...holding('ORD-1', 40n), released('ORD-1', 40n)], freeze('ORD-1', 40n), 'ALREADY_FROZEN'],

  ['deduct after release', [...holding('ORD-1', 40n), released('ORD-1', 40n)], deduct('ORD-1'), 'ALREADY_RELEASED'],
  ['release twice', [...holding('ORD-1', 40n), released('ORD-1', 40n)], release('ORD-1'), 'ALREADY_RELEASED'],
  ['release after deduct', [...holding('ORD-1', 40n), deducted('ORD-1', 40n)], release('ORD-1'), 'ALREADY_DEDUCTED'],
  ['deduct twice', [...holding('ORD-1', 40n), deducted('ORD-1', 40n)], deduct('ORD-1'), 'ALREADY_DEDUCTED'],

  ['deduct an order never frozen', funded(), deduct('ORD-9'), 'NOT_FROZEN'],
  ['release an order never frozen', funded(), release('ORD-9'), 'NOT_FROZEN'],
  ['deduct an unknown order beside a hold', holding('ORD-1', 40n), deduct('ORD-9'), 'NOT_FROZEN'],
  ['deduct another attempt of a held order', holding('ORD-1', 40n), deduct('ORD-1', 2), 'NOT_FROZEN'],
  ['release another attempt of a held order', holding('ORD-1', 40n), release('ORD-1', 2), 'NOT_FROZEN'],
  ['deduct the next attempt after the first was released', [...holding('ORD-1', 40n), released('ORD-1', 40n)], deduct('ORD-1', 2), 'NOT_FROZEN'],

  ['adjust an unopened wallet', [], adjust({ direction: 'credit', amount: 10n }), 'WALLET_NOT_OPEN'],
  ['zero adjustment', funded(), adjust({ direction: 'credit', amount: 0n }), 'INVALID_AMOUNT'],
  ['negative adjustment', funded(), adjust({ direction: 'debit', amount: -5n }), 'INVALID_AMOUNT'],
  ['debit one cent more than the balance', funded(100n), adjust({ direction: 'debit', amount: 101n }), 'INSUFFICIENT_BALANCE'],
  ['debit into the funds frozen for orders', holding('ORD-1', 80n, 100n), adjust({ direction: 'debit', amount: 21n }), 'INSUFFICIENT_BALANCE'],
  [
    'adjustment reference reused for another amount',
    [...funded(), adjusted({ direction: 'credit', amount: 10n })],
    adjust({ direction: 'credit', amount: 11n }),
    'ADJUSTMENT_REFERENCE_CONFLICT',
  ],
  [
    'adjustment reference reused the other way',
    [...funded(), adjusted({ direction: 'credit', amount: 10n })],
    adjust({ direction: 'debit', amount: 10n }),
    'ADJUSTMENT_REFERENCE_CONFLICT',
  ],
  [
    'an order corrected twice for one reason',
    [...funded(), adjusted({ direction: 'credit', amount: 10n, orderNo: 'ORD-1' })],
    adjust({ direction: 'credit', amount: 10n, orderNo: 'ORD-1', reference: 'ADJ-2' }),
    'ORDER_ALREADY_ADJUSTED',
  ],
];

describe('wallet decider', () => {
  describe('refusals', () => {
    it.each(refusals)('%s', (_name, history, command, code) => {
      wallet.given(history).when(command).thenRefused(code);
    });

    it('covers every refusal code', () => {
      const everyCode = Object.keys({
        WALLET_NOT_OPEN: 0,
        WALLET_ALREADY_OPEN: 0,
        INVALID_AMOUNT: 0,
        DEPOSIT_REFERENCE_CONFLICT: 0,
        INSUFFICIENT_BALANCE: 0,
        ALREADY_FROZEN: 0,
        ALREADY_DEDUCTED: 0,
        ALREADY_RELEASED: 0,
        NOT_FROZEN: 0,
        ADJUSTMENT_REFERENCE_CONFLICT: 0,
        ORDER_ALREADY_ADJUSTED: 0,
      } satisfies Record<WalletRefusalCode, 0>);
      expect(new Set(refusals.map(([, , , code]) => code))).toEqual(new Set(everyCode));
    });
  });

  describe('AdjustWallet', () => {
    it('credits the balance, the frozen funds untouched', () => {
      wallet
        .given(holding('ORD-1', 40n))
        .when(adjust({ direction: 'credit', amount: 25n, orderNo: 'ORD-0' }))
        .then([adjusted({ direction: 'credit', amount: 25n, orderNo: 'ORD-0' })]);
      const after = stateAfter([...holding('ORD-1', 40n), adjusted({ direction: 'credit', amount: 25n })]);
      expect([after.balance, after.frozen, availableBalance(after)]).toEqual([125n, 40n, 85n]);
    });

    it('debits down to the available balance, not into the frozen funds', () => {
      wallet
        .given(holding('ORD-1', 80n, 100n))
        .when(adjust({ direction: 'debit', amount: 20n }))
        .then([adjusted({ direction: 'debit', amount: 20n })]);
      const after = stateAfter([...holding('ORD-1', 80n, 100n), adjusted({ direction: 'debit', amount: 20n })]);
      expect([after.balance, after.frozen, availableBalance(after)]).toEqual([80n, 80n, 0n]);
    });

    it('takes the same adjustment again as done: no event', () => {
      wallet
        .given([...funded(), adjusted({ direction: 'debit', amount: 10n, orderNo: 'ORD-1' })])
        .when(adjust({ direction: 'debit', amount: 10n, orderNo: 'ORD-1' }))
        .then([]);
    });

    it('corrects one order once per reason, and again for another reason', () => {
      const history = [...funded(), adjusted({ direction: 'credit', amount: 10n, orderNo: 'ORD-1' })];
      wallet
        .given(history)
        .when(adjust({ direction: 'debit', amount: 3n, orderNo: 'ORD-1', reference: 'ADJ-2', reason: 'AMOUNT_DIFFERS' }))
        .then([adjusted({ direction: 'debit', amount: 3n, orderNo: 'ORD-1', reference: 'ADJ-2', reason: 'AMOUNT_DIFFERS' })]);
    });

    it('records no order for an adjustment that corrects none', () => {
      const decision = walletDecider.decide(adjust({ direction: 'credit', amount: 5n }), stateAfter(funded()));
      expect(decision.ok && decision.events[0].data).not.toHaveProperty('orderNo');
    });
  });

  describe('OpenWallet', () => {
    it('opens a new wallet', () => {
      wallet.given([]).when(openWallet()).then([opened()]);
    });

    it('holds nothing before it is opened', () => {
      expect(walletDecider.initialState()).toEqual({ status: 'unopened' });
      expect(amountsOf(walletDecider.initialState())).toEqual({ balance: 0n, frozen: 0n });
    });

    it('fails loudly on a log that moves money before the opening', () => {
      expect(() => walletDecider.evolve(walletDecider.initialState(), deposited(100n))).toThrow('FundsDeposited in a wallet that was never opened');
    });

    it('starts empty', () => {
      const state = stateAfter([opened()]);
      expect(state).toMatchObject({ status: 'open', merchantId: MERCHANT, currency: 'CNY', balance: 0n, frozen: 0n });
    });
  });

  describe('DepositFunds', () => {
    it('deposits funds', () => {
      wallet
        .given([opened()])
        .when(deposit(100n))
        .then([deposited(100n)]);
    });

    it('deposits under a new reference', () => {
      wallet
        .given(funded(100n))
        .when(deposit(100n, 'DEP-2'))
        .then([deposited(100n, 'DEP-2')]);
    });

    it('accepts the same deposit again and changes nothing', () => {
      wallet.given(funded(100n)).when(deposit(100n)).then([]);
    });

    it('adds deposits to the balance', () => {
      expect(stateAfter([...funded(100n), deposited(25n, 'DEP-2')]).balance).toBe(125n);
    });
  });

  describe('FreezeFunds', () => {
    it('freezes funds for an order', () => {
      wallet
        .given(funded(100n))
        .when(freeze('ORD-1', 40n))
        .then([frozen('ORD-1', 40n)]);
    });

    it('freezes exactly the available balance', () => {
      wallet
        .given(holding('ORD-1', 40n, 100n))
        .when(freeze('ORD-2', 60n))
        .then([frozen('ORD-2', 60n)]);
    });

    it('freezes the next attempt of an order whose first attempt was released', () => {
      wallet
        .given([...holding('ORD-1', 40n), released('ORD-1', 40n)])
        .when(freeze('ORD-1', 40n, 2))
        .then([frozen('ORD-1', 40n, 2)]);
    });

    it('makes the frozen amount unavailable without touching the balance', () => {
      const state = stateAfter(holding('ORD-1', 40n, 100n));
      expect(state.balance).toBe(100n);
      expect(state.frozen).toBe(40n);
      expect(availableBalance(state)).toBe(60n);
    });
  });

  describe('DeductFrozenFunds', () => {
    it('deducts the frozen amount', () => {
      wallet
        .given(holding('ORD-1', 40n))
        .when(deduct('ORD-1'))
        .then([deducted('ORD-1', 40n)]);
    });

    it('takes the amount from both balance and frozen', () => {
      const state = stateAfter([...holding('ORD-1', 40n, 100n), deducted('ORD-1', 40n)]);
      expect(state.balance).toBe(60n);
      expect(state.frozen).toBe(0n);
      expect(availableBalance(state)).toBe(60n);
    });
  });

  describe('ReleaseFrozenFunds', () => {
    it('releases the frozen amount with its reason', () => {
      wallet
        .given(holding('ORD-1', 40n))
        .when(release('ORD-1', 1, 'ORDER_REFUSED'))
        .then([released('ORD-1', 40n, 1, 'ORDER_REFUSED')]);
    });

    it('makes the amount available again', () => {
      const state = stateAfter([...holding('ORD-1', 40n, 100n), released('ORD-1', 40n)]);
      expect(state.balance).toBe(100n);
      expect(state.frozen).toBe(0n);
      expect(availableBalance(state)).toBe(100n);
    });
  });

  describe('property: the books always balance', () => {
    /** mulberry32: a tiny seeded PRNG, so a failing run can be replayed. */
    function mulberry32(seed: number): () => number {
      let a = seed >>> 0;
      return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
      };
    }

    it.each([1, 42, 20261122])('holds over 3000 random commands (seed %i)', (seed) => {
      const random = mulberry32(seed);
      const int = (n: number) => Math.floor(random() * n);
      const pick = <T>(items: readonly T[]): T => items[int(items.length)];
      const amount = (max: number): Minor => BigInt(int(max + 3) - 2); // Sometimes zero or negative.

      const orders = Array.from({ length: 20 }, (_, i) => `ORD-${i}`);
      const references = Array.from({ length: 40 }, (_, i) => `DEP-${i}`);

      // The model: kept from the commands, independently of the decider's state.
      const deposits = new Map<string, Minor>();
      const holds = new Map<string, Minor>();
      const closed = new Set<string>();
      let totalDeposits = 0n;
      let totalDeductions = 0n;

      let state = walletDecider.evolve(walletDecider.initialState(), opened());
      const counts: Record<string, number> = {};

      for (let step = 0; step < 3000; step++) {
        const orderNo = pick(orders);
        const attempt = 1 + int(2);
        const key = holdKey(orderNo, attempt);
        const roll = random();
        const command: WalletCommand =
          roll < 0.3
            ? deposit(amount(500), pick(references))
            : roll < 0.65
              ? freeze(orderNo, amount(400), attempt)
              : roll < 0.85
                ? deduct(orderNo, attempt)
                : release(orderNo, attempt);

        const decision = walletDecider.decide(command, state);
        const outcome = decision.ok ? `${command.type}:ok` : decision.refusal.code;
        counts[outcome] = (counts[outcome] ?? 0) + 1;
        if (decision.ok) for (const event of decision.events) state = walletDecider.evolve(state, event);

        // What the model expects of the command, and its effect when accepted.
        switch (command.type) {
          case 'DepositFunds': {
            const earlier = deposits.get(command.reference);
            const expectOk = command.amount > 0n && (earlier === undefined || earlier === command.amount);
            expect(decision.ok).toBe(expectOk);
            if (expectOk && earlier === undefined) {
              deposits.set(command.reference, command.amount);
              totalDeposits += command.amount;
            }
            if (decision.ok) expect(decision.events).toHaveLength(earlier === undefined ? 1 : 0);
            break;
          }
          case 'FreezeFunds': {
            const heldTotal = [...holds.values()].reduce((sum, a) => sum + a, 0n);
            const expectOk = command.amount > 0n && !holds.has(key) && !closed.has(key) && command.amount <= totalDeposits - totalDeductions - heldTotal;
            expect(decision.ok).toBe(expectOk);
            if (expectOk) holds.set(key, command.amount);
            break;
          }
          case 'DeductFrozenFunds':
          case 'ReleaseFrozenFunds': {
            const held = holds.get(key);
            expect(decision.ok).toBe(held !== undefined);
            if (held !== undefined) {
              holds.delete(key);
              closed.add(key);
              if (command.type === 'DeductFrozenFunds') totalDeductions += held;
            }
            break;
          }
          default:
            throw new Error(`unexpected command ${command.type}`);
        }

        // The step number rides along so a failure names where the run went wrong.
        const heldTotal = [...holds.values()].reduce((sum, a) => sum + a, 0n);
        expect({ step, balance: state.balance, frozen: state.frozen, availableNotNegative: availableBalance(state) >= 0n }).toEqual({
          step,
          balance: totalDeposits - totalDeductions,
          frozen: heldTotal,
          availableNotNegative: true,
        });
        expect(new Map(state.holds)).toEqual(holds);
      }

      // The run must have exercised both sides of every decision to mean anything.
      for (const outcome of [
        'DepositFunds:ok',
        'FreezeFunds:ok',
        'DeductFrozenFunds:ok',
        'ReleaseFrozenFunds:ok',
        'INVALID_AMOUNT',
        'DEPOSIT_REFERENCE_CONFLICT',
        'INSUFFICIENT_BALANCE',
        'ALREADY_FROZEN',
        'ALREADY_DEDUCTED',
        'ALREADY_RELEASED',
        'NOT_FROZEN',
      ]) {
        expect({ outcome, seen: (counts[outcome] ?? 0) > 0 }).toEqual({ outcome, seen: true });
      }
    });
  });
});

describe('decideBatch: a batch decided leaves the wallet it was decided on whole', () => {
  /** The state's collections as plain entries, so that a comparison cannot pass on shared maps. */
  const snapshot = (state: WalletState) => {
    const wallet = openedWallet(state);
    return {
      balance: wallet.balance,
      frozen: wallet.frozen,
      holds: [...wallet.holds].sort(),
      closedHolds: [...wallet.closedHolds].sort(),
      deposits: [...wallet.deposits].sort(),
    };
  };
  const commands = (...batch: WalletCommand[]) => batch.map((command) => ({ command }));

  it('changes nothing of it for a freeze, a deposit, a deduction and a release, and a hold frozen and settled in the same batch', () => {
    const history = [...funded(1_000n), frozen('ORD-1', 100n), frozen('ORD-2', 50n)];
    const before = stateAfter(history);
    const expected = snapshot(before);
    const batch = commands(freeze('ORD-3', 30n), deposit(200n, 'DEP-2'), deduct('ORD-1'), release('ORD-2'), freeze('ORD-4', 10n), deduct('ORD-4'));
    const decided = decideBatch(before, batch);
    expect(decided.outcomes.map((o) => o.decision.ok)).toEqual(batch.map(() => true));
    expect(decided.events).toHaveLength(batch.length);
    // Nothing of the batch shows in the wallet decided on: a batch that is not written is dropped.
    expect(snapshot(before)).toEqual(expected);

    const replayed = snapshot(stateAfter([...history, ...decided.events]));
    expect(snapshot(decided.after)).toEqual(replayed);
    // Settled once written: the fork's changes go into the wallet's collections.
    expect(snapshot(settleWallet(decided.after))).toEqual(replayed);
  });

  it.each([7, 2026])('matches a fresh replay of the history after random batches, each dropped or settled (seed %i)', (seed) => {
    let a = seed;
    const random = () => (a = (Math.imul(a, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const int = (n: number) => Math.floor(random() * n);
    const history: WalletEvent[] = [opened(), deposited(5_000n)];
    const dropped = new Set<WalletEvent['type']>();
    let state: WalletState = stateAfter(history);
    for (let round = 0; round < 200; round++) {
      const batch: WalletCommand[] = [];
      for (let i = 0; i < 1 + int(6); i++) {
        const orderNo = `ORD-${int(30)}`;
        const roll = random();
        batch.push(
          roll < 0.15
            ? deposit(BigInt(1 + int(50)), `DEP-${int(20)}`)
            : roll < 0.6
              ? freeze(orderNo, BigInt(1 + int(80)))
              : roll < 0.8
                ? deduct(orderNo)
                : release(orderNo),
        );
      }
      const decided = decideBatch(state, commands(...batch));
      if (random() < 0.5) {
        // Lost to another writer: dropped, and the same state goes on.
        for (const event of decided.events) dropped.add(event.type);
      } else {
        history.push(...decided.events);
        state = settleWallet(decided.after);
      }
      expect({ round, ...snapshot(state) }).toEqual({ round, ...snapshot(stateAfter(history)) });
    }
    expect([...dropped].sort()).toEqual(['FrozenFundsDeducted', 'FrozenFundsReleased', 'FundsDeposited', 'FundsFrozen']);
  });

  it('decides each command on the wallet the ones before it left, and keeps the companions of those decided with events', () => {
    const decided = decideBatch(stateAfter(funded(100n)), [
      { command: freeze('ORD-1', 60n), companion: 'first' },
      { command: freeze('ORD-2', 60n), companion: 'refused' },
      { command: deposit(100n), companion: 'the same deposit again' },
      { command: deduct('ORD-1') },
      { command: deposit(5n, 'DEP-2'), companion: 'last' },
    ]);
    expect(decided.outcomes.map(({ decision, balance, frozen }) => [decision.ok ? decision.events.length : decision.refusal.code, balance, frozen])).toEqual([
      [1, 100n, 60n],
      ['INSUFFICIENT_BALANCE', 100n, 60n],
      [0, 100n, 60n],
      [1, 40n, 0n],
      [1, 45n, 0n],
    ]);
    expect(decided.events.map((e) => e.type)).toEqual(['FundsFrozen', 'FrozenFundsDeducted', 'FundsDeposited']);
    expect(decided.companions).toEqual([
      { index: 0, companion: 'first' },
      { index: 4, companion: 'last' },
    ]);
  });

  it('opens an unopened wallet in a batch and leaves the unopened one as it was', () => {
    const unopened = walletDecider.initialState();
    const decided = decideBatch(unopened, commands(deposit(10n), openWallet(), deposit(10n)));
    expect(decided.outcomes.map(({ decision, balance }) => [decision.ok || decision.refusal.code, balance])).toEqual([
      ['WALLET_NOT_OPEN', 0n],
      [true, 0n],
      [true, 10n],
    ]);
    expect(unopened).toEqual({ status: 'unopened' });
    expect(snapshot(settleWallet(decided.after))).toEqual(snapshot(stateAfter([opened(), deposited(10n)])));
  });

  it('decides a batch on a batch not yet settled and leaves that one as it was', () => {
    const first = decideBatch(stateAfter(funded(100n)), commands(freeze('ORD-1', 30n)));
    const expected = snapshot(first.after);
    const second = decideBatch(first.after, commands(deduct('ORD-1'), freeze('ORD-2', 70n)));
    expect(second.outcomes.every((o) => o.decision.ok)).toBe(true);
    expect(snapshot(first.after)).toEqual(expected);
    expect(snapshot(settleWallet(second.after))).toEqual(snapshot(stateAfter([...funded(100n), ...first.events, ...second.events])));
  });
});

describe('holdKey', () => {
  it('keys no two order attempts alike, nor two merchants’ holds', () => {
    const holds = [holdKey('T1', 11), holdKey('T11', 1), holdKey('T1#1', 1), holdKey('T1', 1)];
    expect(new Set(holds).size).toBe(holds.length);
    const scoped = [merchantHoldKey('mch_1', holdKey('T1', 1)), merchantHoldKey('mch_', holdKey('1T1', 1)), merchantHoldKey('mch_1T', holdKey('1', 1))];
    expect(new Set(scoped).size).toBe(scoped.length);
  });
});

describe('DeductFrozenFunds decided by staff', () => {
  const at = '2026-11-22T10:00:00.000+00:00';
  const history: WalletEvent[] = [
    { type: 'WalletOpened', data: { merchantId: 'm', currency: 'USD', at } },
    { type: 'FundsDeposited', data: { reference: 'r', amount: 500n, by: 'ops', at } },
    { type: 'FundsFrozen', data: { orderNo: 'O1', attempt: 1, amount: 120n, at } },
  ];

  it('keeps the reason on the deduction, for the statement', () => {
    specify(walletDecider)
      .given(history)
      .when({ type: 'DeductFrozenFunds', orderNo: 'O1', attempt: 1, reason: 'RESOLVED_SUCCESS', at })
      .then([{ type: 'FrozenFundsDeducted', data: { orderNo: 'O1', attempt: 1, amount: 120n, reason: 'RESOLVED_SUCCESS', at } }]);
  });

  it('writes no reason for an upstream delivery', () => {
    specify(walletDecider)
      .given(history)
      .when({ type: 'DeductFrozenFunds', orderNo: 'O1', attempt: 1, at })
      .then([{ type: 'FrozenFundsDeducted', data: { orderNo: 'O1', attempt: 1, amount: 120n, at } }]);
  });
});
