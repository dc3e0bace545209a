import { fold } from '../../shared/decider';
import { specify } from '../../../test/support/decider-specification';
import {
  DeliveryFailCode,
  endsOrder,
  FailCode,
  FINAL_STAGES,
  failureOf,
  isFinal,
  UpstreamFailCode,
  merchantStatus,
  MerchantStatus,
  OrderCommand,
  orderDecider,
  OrderEvent,
  OrderRefusalCode,
  OrderStage,
  OrderTarget,
  PlacedOrder,
  RESOLVED_FAILED_REASON,
  sameTarget,
} from './order.decider';

const PLACED_AT = '2026-11-22T10:00:00.000+00:00';
const AT = '2026-11-22T10:01:00.000+00:00';
const LATER = '2026-11-22T10:02:00.000+00:00';
const STAFF = 'recon@example.com';

const TARGET: OrderTarget = {
  skuId: 'SKU-MOBILE-100',
  accountId: '13800000000',
  accountFields: { region: 'GD', carrier: 'CMCC' },
};

type OrderRequest = Omit<PlacedOrder, 'attempt'>;
const request = (overrides: Partial<OrderRequest> = {}): OrderRequest => ({
  orderNo: 'ORD-7f3a',
  merchantId: 'M-1001',
  outTradeNo: 'OTN-2026-0001',
  amount: 120n,
  currency: 'CNY',
  ...TARGET,
  at: PLACED_AT,
  ...overrides,
});

// Events.
const placed = (attempt = 1, overrides: Partial<OrderRequest> = {}): OrderEvent => ({
  type: 'OrderPlaced',
  data: { ...request(overrides), attempt },
});
const accepted = (attempt = 1): OrderEvent => ({ type: 'OrderAccepted', data: { attempt, at: AT } });
const refused = (attempt = 1, code = 'INSUFFICIENT_BALANCE'): OrderEvent => ({ type: 'OrderRefused', data: { attempt, code, at: AT } });
const sentUpstream = (upstreamAttempt = 1): OrderEvent => ({ type: 'OrderSentUpstream', data: { upstreamAttempt, at: AT } });
const resultUnknown = (reason = 'upstream timed out'): OrderEvent => ({ type: 'OrderResultUnknown', data: { reason, at: AT } });
const deliveryConfirmed = (): OrderEvent => ({ type: 'OrderDeliveryConfirmed', data: { at: AT } });
const deliveryFailed = (failCode: DeliveryFailCode = 'INVALID_ACCOUNT', failReason = 'account does not exist'): OrderEvent => ({
  type: 'OrderDeliveryFailed',
  data: { failCode, failReason, at: AT },
});
const resolved = (outcome: 'success' | 'failed', note = 'checked with the provider'): OrderEvent => ({
  type: 'OrderResolved',
  data: { outcome, resolvedBy: STAFF, note, at: AT },
});
const succeeded = (): OrderEvent => ({ type: 'OrderSucceeded', data: { at: LATER } });
const failed = (failCode: FailCode = 'INVALID_ACCOUNT', failReason = 'account does not exist'): OrderEvent => ({
  type: 'OrderFailed',
  data: { failCode, failReason, at: LATER },
});

// Commands.
const placeOrder = (overrides: Partial<OrderRequest> = {}): OrderCommand => ({ type: 'PlaceOrder', order: request(overrides) });
const acceptOrder = (attempt = 1): OrderCommand => ({ type: 'AcceptOrder', attempt, at: AT });
const refuseOrder = (attempt = 1, code = 'INSUFFICIENT_BALANCE'): OrderCommand => ({ type: 'RefuseOrder', attempt, code, at: AT });
const recordUpstreamAttempt = (): OrderCommand => ({ type: 'RecordUpstreamAttempt', at: AT });
const markResultUnknown = (reason = 'upstream timed out'): OrderCommand => ({ type: 'MarkResultUnknown', reason, at: AT });
const confirmDelivery = (): OrderCommand => ({ type: 'ConfirmDelivery', at: AT });
const recordDeliveryFailure = (failCode: UpstreamFailCode = 'INVALID_ACCOUNT', failReason = 'account does not exist'): OrderCommand => ({
  type: 'RecordDeliveryFailure',
  failCode,
  failReason,
  at: AT,
});
const resolveOrder = (outcome: 'success' | 'failed', note = 'checked with the provider'): OrderCommand => ({
  type: 'ResolveOrder',
  outcome,
  resolvedBy: STAFF,
  note,
  at: AT,
});
const completeOrder = (): OrderCommand => ({ type: 'CompleteOrder', at: LATER });

// Histories, one per stage.
const NONE: OrderEvent[] = [];
const PLACED = [placed(1)];
const REFUSED = [...PLACED, refused(1)];
const ACCEPTED = [...PLACED, accepted(1)];
const SENT = [...ACCEPTED, sentUpstream(1)];
const UNKNOWN = [...SENT, resultUnknown()];
const SUCCEEDING = [...SENT, deliveryConfirmed()];
const FAILING = [...SENT, deliveryFailed()];
const RESOLVED_SUCCESS = [...UNKNOWN, resolved('success')];
const RESOLVED_FAILED = [...UNKNOWN, resolved('failed')];
const SUCCEEDED = [...SUCCEEDING, succeeded()];
const FAILED = [...FAILING, failed()];

const order = specify(orderDecider);

type RefusalCase = [name: string, history: OrderEvent[], command: OrderCommand, code: OrderRefusalCode];

/** Every refusal the order can return, and every state that leads to it. */
const refusals: RefusalCase[] = [
  ['place the same target on a placed order', PLACED, placeOrder(), 'ORDER_EXISTS'],
  ['place the same target on an accepted order', ACCEPTED, placeOrder(), 'ORDER_EXISTS'],
  ['place the same target on an unknown-result order', UNKNOWN, placeOrder(), 'ORDER_EXISTS'],
  ['place the same target on a succeeded order', SUCCEEDED, placeOrder(), 'ORDER_EXISTS'],
  ['place the same target on a failed order', FAILED, placeOrder(), 'ORDER_EXISTS'],
  ['place the same target with fields in another order', ACCEPTED, placeOrder({ accountFields: { carrier: 'CMCC', region: 'GD' } }), 'ORDER_EXISTS'],

  ['place a different sku', ACCEPTED, placeOrder({ skuId: 'SKU-MOBILE-50' }), 'OUT_TRADE_NO_CONFLICT'],
  ['place a different account', ACCEPTED, placeOrder({ accountId: '13900000000' }), 'OUT_TRADE_NO_CONFLICT'],
  ['place a different field value', ACCEPTED, placeOrder({ accountFields: { region: 'BJ', carrier: 'CMCC' } }), 'OUT_TRADE_NO_CONFLICT'],
  ['place with an extra field', ACCEPTED, placeOrder({ accountFields: { region: 'GD', carrier: 'CMCC', note: 'x' } }), 'OUT_TRADE_NO_CONFLICT'],
  ['place with a missing field', ACCEPTED, placeOrder({ accountFields: { region: 'GD' } }), 'OUT_TRADE_NO_CONFLICT'],
  ['place a different target on a placed order', PLACED, placeOrder({ skuId: 'SKU-MOBILE-50' }), 'OUT_TRADE_NO_CONFLICT'],
  ['place a different target on a succeeded order', SUCCEEDED, placeOrder({ skuId: 'SKU-MOBILE-50' }), 'OUT_TRADE_NO_CONFLICT'],

  ['accept with a stale attempt', [...REFUSED, placed(2)], acceptOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['refuse with a stale attempt', [...REFUSED, placed(2)], refuseOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['accept an attempt not yet placed', PLACED, acceptOrder(2), 'ATTEMPT_NOT_PENDING'],
  ['accept after refuse', REFUSED, acceptOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['refuse after refuse', REFUSED, refuseOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['refuse after accept', ACCEPTED, refuseOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['accept after accept', ACCEPTED, acceptOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['accept a sent order', SENT, acceptOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['refuse a succeeded order', SUCCEEDED, refuseOrder(1), 'ATTEMPT_NOT_PENDING'],
  ['accept an order never placed', NONE, acceptOrder(1), 'ORDER_NOT_FOUND'],
  ['refuse an order never placed', NONE, refuseOrder(1), 'ORDER_NOT_FOUND'],

  ['record an upstream attempt for an order never placed', NONE, recordUpstreamAttempt(), 'ORDER_NOT_FOUND'],
  ['mark an order never placed unknown', NONE, markResultUnknown(), 'ORDER_NOT_FOUND'],
  ['confirm an order never placed', NONE, confirmDelivery(), 'ORDER_NOT_FOUND'],
  ['record a failure for an order never placed', NONE, recordDeliveryFailure(), 'ORDER_NOT_FOUND'],

  ['record an upstream attempt for a placed order', PLACED, recordUpstreamAttempt(), 'ORDER_NOT_ACCEPTED'],
  ['mark a placed order unknown', PLACED, markResultUnknown(), 'ORDER_NOT_ACCEPTED'],
  ['confirm a placed order', PLACED, confirmDelivery(), 'ORDER_NOT_ACCEPTED'],
  ['record a failure for a placed order', PLACED, recordDeliveryFailure(), 'ORDER_NOT_ACCEPTED'],
  ['record an upstream attempt for a refused order', REFUSED, recordUpstreamAttempt(), 'ORDER_NOT_ACCEPTED'],
  ['mark a refused order unknown', REFUSED, markResultUnknown(), 'ORDER_NOT_ACCEPTED'],
  ['confirm a refused order', REFUSED, confirmDelivery(), 'ORDER_NOT_ACCEPTED'],
  ['record a failure for a refused order', REFUSED, recordDeliveryFailure(), 'ORDER_NOT_ACCEPTED'],

  ['mark an unknown-result order unknown again', UNKNOWN, markResultUnknown(), 'RESULT_ALREADY_UNKNOWN'],

  ['confirm an unknown-result order without a resolution', UNKNOWN, confirmDelivery(), 'RESOLUTION_REQUIRED'],
  ['release an unknown-result order without a resolution', UNKNOWN, recordDeliveryFailure(), 'RESOLUTION_REQUIRED'],
  ['record an upstream attempt for an unknown-result order', UNKNOWN, recordUpstreamAttempt(), 'RESOLUTION_REQUIRED'],

  ['resolve an order never placed', NONE, resolveOrder('success'), 'ORDER_NOT_FOUND'],
  ['resolve a placed order', PLACED, resolveOrder('success'), 'ORDER_NOT_IN_RECONCILIATION'],
  ['resolve a refused order', REFUSED, resolveOrder('failed'), 'ORDER_NOT_IN_RECONCILIATION'],
  ['resolve an accepted order', ACCEPTED, resolveOrder('success'), 'ORDER_NOT_IN_RECONCILIATION'],
  ['resolve a sent order', SENT, resolveOrder('failed'), 'ORDER_NOT_IN_RECONCILIATION'],

  ['confirm after a failure was recorded', FAILING, confirmDelivery(), 'OUTCOME_ALREADY_DECIDED'],
  ['record a failure after a confirmation', SUCCEEDING, recordDeliveryFailure(), 'OUTCOME_ALREADY_DECIDED'],
  ['confirm twice', SUCCEEDING, confirmDelivery(), 'OUTCOME_ALREADY_DECIDED'],
  ['record a failure twice', FAILING, recordDeliveryFailure(), 'OUTCOME_ALREADY_DECIDED'],
  ['record an upstream attempt after a confirmation', SUCCEEDING, recordUpstreamAttempt(), 'OUTCOME_ALREADY_DECIDED'],
  ['record an upstream attempt after a failure', FAILING, recordUpstreamAttempt(), 'OUTCOME_ALREADY_DECIDED'],
  ['mark unknown after a confirmation', SUCCEEDING, markResultUnknown(), 'OUTCOME_ALREADY_DECIDED'],
  ['mark unknown after a failure', FAILING, markResultUnknown(), 'OUTCOME_ALREADY_DECIDED'],
  ['resolve a confirmed order', SUCCEEDING, resolveOrder('failed'), 'OUTCOME_ALREADY_DECIDED'],
  ['resolve an order whose failure was recorded', FAILING, resolveOrder('success'), 'OUTCOME_ALREADY_DECIDED'],
  ['resolve twice (success first)', RESOLVED_SUCCESS, resolveOrder('success'), 'OUTCOME_ALREADY_DECIDED'],
  ['resolve twice (failed, then success)', RESOLVED_FAILED, resolveOrder('success'), 'OUTCOME_ALREADY_DECIDED'],
  ['confirm a resolved order', RESOLVED_FAILED, confirmDelivery(), 'OUTCOME_ALREADY_DECIDED'],
  ['record a failure for a resolved order', RESOLVED_SUCCESS, recordDeliveryFailure(), 'OUTCOME_ALREADY_DECIDED'],
  ['mark a resolved order unknown', RESOLVED_SUCCESS, markResultUnknown(), 'OUTCOME_ALREADY_DECIDED'],

  ['complete an order never placed', NONE, completeOrder(), 'ORDER_NOT_FOUND'],
  ['complete a placed order', PLACED, completeOrder(), 'OUTCOME_NOT_DECIDED'],
  ['complete a refused order', REFUSED, completeOrder(), 'OUTCOME_NOT_DECIDED'],
  ['complete an accepted order', ACCEPTED, completeOrder(), 'OUTCOME_NOT_DECIDED'],
  ['complete a sent order', SENT, completeOrder(), 'OUTCOME_NOT_DECIDED'],
  ['complete an unknown-result order', UNKNOWN, completeOrder(), 'OUTCOME_NOT_DECIDED'],

  ...(
    [
      ['succeeded', SUCCEEDED],
      ['failed', FAILED],
    ] as const
  ).flatMap(([stage, history]): RefusalCase[] => [
    [`record an upstream attempt for a ${stage} order`, history, recordUpstreamAttempt(), 'ORDER_ALREADY_FINAL'],
    [`mark a ${stage} order unknown`, history, markResultUnknown(), 'ORDER_ALREADY_FINAL'],
    [`confirm a ${stage} order`, history, confirmDelivery(), 'ORDER_ALREADY_FINAL'],
    [`record a failure for a ${stage} order`, history, recordDeliveryFailure(), 'ORDER_ALREADY_FINAL'],
    [`resolve a ${stage} order`, history, resolveOrder('success'), 'ORDER_ALREADY_FINAL'],
    [`complete a ${stage} order`, history, completeOrder(), 'ORDER_ALREADY_FINAL'],
  ]),
  ['complete a resolved order twice', [...RESOLVED_FAILED, failed('RESOLVED_FAILED', RESOLVED_FAILED_REASON)], completeOrder(), 'ORDER_ALREADY_FINAL'],
];

describe('order decider', () => {
  describe('refusals', () => {
    it.each(refusals)('%s', (_name, history, command, code) => {
      order.given(history).when(command).thenRefused(code);
    });

    it('covers every refusal code', () => {
      const everyCode = Object.keys({
        ORDER_EXISTS: 0,
        OUT_TRADE_NO_CONFLICT: 0,
        ORDER_NOT_FOUND: 0,
        ATTEMPT_NOT_PENDING: 0,
        ORDER_NOT_ACCEPTED: 0,
        RESULT_ALREADY_UNKNOWN: 0,
        RESOLUTION_REQUIRED: 0,
        ORDER_NOT_IN_RECONCILIATION: 0,
        OUTCOME_ALREADY_DECIDED: 0,
        OUTCOME_NOT_DECIDED: 0,
        ORDER_ALREADY_FINAL: 0,
      } satisfies Record<OrderRefusalCode, 0>);
      expect(new Set(refusals.map(([, , , code]) => code))).toEqual(new Set(everyCode));
    });
  });

  describe('PlaceOrder', () => {
    it('places a new order as attempt 1', () => {
      order
        .given(NONE)
        .when(placeOrder())
        .then([placed(1)]);
    });

    it('places the same target again after a refusal as attempt 2', () => {
      order
        .given(REFUSED)
        .when(placeOrder())
        .then([placed(2)]);
    });

    it('places a different target after a refusal', () => {
      const other = { skuId: 'SKU-MOBILE-50', accountId: '13900000000', accountFields: { region: 'BJ' }, amount: 50n };
      order
        .given(REFUSED)
        .when(placeOrder(other))
        .then([placed(2, other)]);
    });

    it('counts attempts across several refusals', () => {
      order
        .given([...REFUSED, placed(2), refused(2)])
        .when(placeOrder())
        .then([placed(3)]);
    });
  });

  describe('AcceptOrder', () => {
    it('accepts the pending attempt', () => {
      order
        .given(PLACED)
        .when(acceptOrder(1))
        .then([accepted(1)]);
    });

    it('accepts a re-placed attempt', () => {
      order
        .given([...REFUSED, placed(2)])
        .when(acceptOrder(2))
        .then([accepted(2)]);
    });
  });

  describe('RefuseOrder', () => {
    it('refuses the pending attempt with its code', () => {
      order
        .given(PLACED)
        .when(refuseOrder(1, 'INSUFFICIENT_BALANCE'))
        .then([refused(1, 'INSUFFICIENT_BALANCE')]);
    });
  });

  describe('RecordUpstreamAttempt', () => {
    it('numbers the first attempt 1', () => {
      order
        .given(ACCEPTED)
        .when(recordUpstreamAttempt())
        .then([sentUpstream(1)]);
    });

    it('numbers the next attempt 2', () => {
      order
        .given(SENT)
        .when(recordUpstreamAttempt())
        .then([sentUpstream(2)]);
    });
  });

  describe('MarkResultUnknown', () => {
    it('marks a sent order unknown', () => {
      order
        .given(SENT)
        .when(markResultUnknown('read timeout'))
        .then([resultUnknown('read timeout')]);
    });

    it('marks an accepted order unknown', () => {
      order.given(ACCEPTED).when(markResultUnknown()).then([resultUnknown()]);
    });
  });

  describe('ConfirmDelivery', () => {
    it('confirms a sent order', () => {
      order.given(SENT).when(confirmDelivery()).then([deliveryConfirmed()]);
    });
  });

  describe('RecordDeliveryFailure', () => {
    it('records the failure with its code and reason', () => {
      order
        .given(SENT)
        .when(recordDeliveryFailure('INVALID_ACCOUNT', 'no such phone number'))
        .then([deliveryFailed('INVALID_ACCOUNT', 'no such phone number')]);
    });
  });

  describe('ResolveOrder', () => {
    it('resolves an unknown-result order as a success', () => {
      order
        .given(UNKNOWN)
        .when(resolveOrder('success', 'provider confirmed'))
        .then([resolved('success', 'provider confirmed')]);
    });

    it('resolves an unknown-result order as a failure', () => {
      order
        .given(UNKNOWN)
        .when(resolveOrder('failed', 'provider has no record'))
        .then([resolved('failed', 'provider has no record')]);
    });
  });

  describe('CompleteOrder', () => {
    it('succeeds a confirmed order', () => {
      order.given(SUCCEEDING).when(completeOrder()).then([succeeded()]);
    });

    it('fails an order with the recorded fail code and reason', () => {
      order
        .given([...SENT, deliveryFailed('INVALID_ACCOUNT', 'no such phone number')])
        .when(completeOrder())
        .then([failed('INVALID_ACCOUNT', 'no such phone number')]);
    });

    it('succeeds an order resolved as a success', () => {
      order.given(RESOLVED_SUCCESS).when(completeOrder()).then([succeeded()]);
    });

    it('fails an order resolved as failed with RESOLVED_FAILED and the standard reason', () => {
      order
        .given(RESOLVED_FAILED)
        .when(completeOrder())
        .then([failed('RESOLVED_FAILED', RESOLVED_FAILED_REASON)]);
    });
  });

  describe('lifecycles', () => {
    /** Runs commands in turn, each given the events of those before it; returns every event. */
    function run(commands: OrderCommand[]): OrderEvent[] {
      const history: OrderEvent[] = [];
      for (const command of commands) {
        const decision = orderDecider.decide(command, fold(orderDecider, history));
        if (!decision.ok) throw new Error(`${command.type} refused: ${decision.refusal.code}`);
        history.push(...decision.events);
      }
      return history;
    }

    it('placed -> accepted -> sent twice -> confirmed -> succeeded', () => {
      const events = run([placeOrder(), acceptOrder(1), recordUpstreamAttempt(), recordUpstreamAttempt(), confirmDelivery(), completeOrder()]);
      expect(events).toEqual([placed(1), accepted(1), sentUpstream(1), sentUpstream(2), deliveryConfirmed(), succeeded()]);
      expect(fold(orderDecider, events)).toMatchObject({ stage: 'succeeded', upstreamAttempts: 2, completedAt: LATER });
    });

    it('placed -> accepted -> sent -> delivery failed -> failed with the same code and reason', () => {
      const events = run([
        placeOrder(),
        acceptOrder(1),
        recordUpstreamAttempt(),
        recordDeliveryFailure('INVALID_ACCOUNT', 'no such phone number'),
        completeOrder(),
      ]);
      expect(events).toEqual([
        placed(1),
        accepted(1),
        sentUpstream(1),
        deliveryFailed('INVALID_ACCOUNT', 'no such phone number'),
        failed('INVALID_ACCOUNT', 'no such phone number'),
      ]);
    });

    it('result unknown -> resolved success -> succeeded', () => {
      const events = run([placeOrder(), acceptOrder(1), recordUpstreamAttempt(), markResultUnknown(), resolveOrder('success'), completeOrder()]);
      expect(events.slice(3)).toEqual([resultUnknown(), resolved('success'), succeeded()]);
    });

    it('result unknown -> resolved failed -> failed with RESOLVED_FAILED', () => {
      const events = run([placeOrder(), acceptOrder(1), recordUpstreamAttempt(), markResultUnknown(), resolveOrder('failed'), completeOrder()]);
      expect(events.slice(3)).toEqual([resultUnknown(), resolved('failed'), failed('RESOLVED_FAILED', RESOLVED_FAILED_REASON)]);
    });

    it('refused -> placed again as attempt 2 -> accepted', () => {
      const events = run([placeOrder(), refuseOrder(1), placeOrder(), acceptOrder(2)]);
      expect(events).toEqual([placed(1), refused(1), placed(2), accepted(2)]);
    });
  });

  describe('the state keyed on its stage', () => {
    const histories: Array<[string, OrderEvent[]]> = [
      ['placed', [placed()]],
      ['refused', [placed(), refused()]],
      ['accepted', [placed(), accepted()]],
      ['sent', [placed(), accepted(), sentUpstream()]],
      ['unknown', [placed(), accepted(), sentUpstream(), resultUnknown()]],
      ['succeeding', [placed(), accepted(), sentUpstream(), deliveryConfirmed()]],
      ['failing', [placed(), accepted(), sentUpstream(), deliveryFailed()]],
      ['succeeded', [placed(), accepted(), sentUpstream(), deliveryConfirmed(), succeeded()]],
      ['failed', [placed(), accepted(), sentUpstream(), deliveryFailed(), failed()]],
      ['failed by staff', [placed(), accepted(), sentUpstream(), resultUnknown(), resolved('failed'), failed('RESOLVED_FAILED', RESOLVED_FAILED_REASON)]],
    ];

    it.each(histories)('%s: endsOrder says of the last event what isFinal says of the state it leaves', (_, events) => {
      const state = fold(orderDecider, events);
      expect(endsOrder(events[events.length - 1])).toBe(isFinal(state));
      expect(isFinal(state)).toBe(FINAL_STAGES.includes(state.stage));
    });

    it('a failure is carried by failing and failed orders only, with what the merchant will see', () => {
      const failures = histories.map(([name, events]) => [name, failureOf(fold(orderDecider, events))]);
      expect(failures.filter(([, failure]) => failure !== undefined)).toEqual([
        ['failing', { failCode: 'INVALID_ACCOUNT', failReason: 'account does not exist' }],
        ['failed', { failCode: 'INVALID_ACCOUNT', failReason: 'account does not exist' }],
        ['failed by staff', { failCode: 'RESOLVED_FAILED', failReason: RESOLVED_FAILED_REASON }],
      ]);
    });

    it('a staff resolution stays on the order once it is final', () => {
      expect(fold(orderDecider, histories[9][1])).toMatchObject({ stage: 'failed', resolvedBy: STAFF });
      expect(fold(orderDecider, histories[7][1])).not.toHaveProperty('resolvedBy');
    });

    it('refuses to evolve an event that follows no placement: the log is broken', () => {
      expect(() => fold(orderDecider, [accepted()])).toThrow('OrderAccepted on an order that was never placed');
    });
  });
});

describe('sameTarget', () => {
  const target = (overrides: Partial<OrderTarget> = {}): OrderTarget => ({ ...TARGET, ...overrides });

  it('matches an identical target', () => {
    expect(sameTarget(target(), target())).toBe(true);
  });

  it('ignores the order of account field keys', () => {
    expect(sameTarget(target({ accountFields: { a: '1', b: '2' } }), target({ accountFields: { b: '2', a: '1' } }))).toBe(true);
  });

  it('matches two targets without fields', () => {
    expect(sameTarget(target({ accountFields: {} }), target({ accountFields: {} }))).toBe(true);
  });

  it.each<[string, Partial<OrderTarget>, Partial<OrderTarget>]>([
    ['a different sku', {}, { skuId: 'SKU-OTHER' }],
    ['a different account', {}, { accountId: '13900000000' }],
    ['a different field value', { accountFields: { a: '1' } }, { accountFields: { a: '2' } }],
    ['a missing field', { accountFields: { a: '1', b: '2' } }, { accountFields: { a: '1' } }],
    ['an extra field', { accountFields: { a: '1' } }, { accountFields: { a: '1', b: '2' } }],
    ['a renamed field', { accountFields: { a: '1' } }, { accountFields: { b: '1' } }],
    ['an empty field value against none', { accountFields: {} }, { accountFields: { a: '' } }],
  ])('differs on %s, both ways', (_name, left, right) => {
    expect(sameTarget(target(left), target(right))).toBe(false);
    expect(sameTarget(target(right), target(left))).toBe(false);
  });
});

describe('merchantStatus', () => {
  it.each<[OrderStage, MerchantStatus | undefined]>([
    ['none', undefined],
    ['placed', undefined],
    ['refused', undefined],
    ['accepted', 'processing'],
    ['sent', 'processing'],
    ['unknown', 'processing'],
    ['succeeding', 'processing'],
    ['failing', 'processing'],
    ['succeeded', 'success'],
    ['failed', 'failed'],
  ])('%s -> %s', (stage, status) => {
    expect(merchantStatus(stage)).toBe(status);
  });

  it.each<[string, OrderEvent[], MerchantStatus | undefined]>([
    ['never placed', NONE, undefined],
    ['placed', PLACED, undefined],
    ['refused', REFUSED, undefined],
    ['accepted', ACCEPTED, 'processing'],
    ['sent', SENT, 'processing'],
    ['result unknown', UNKNOWN, 'processing'],
    ['confirmed', SUCCEEDING, 'processing'],
    ['delivery failed', FAILING, 'processing'],
    ['resolved', RESOLVED_FAILED, 'processing'],
    ['succeeded', SUCCEEDED, 'success'],
    ['failed', FAILED, 'failed'],
  ])('an order %s shows %s', (_name, history, status) => {
    expect(merchantStatus(fold(orderDecider, history).stage)).toBe(status);
  });
});
