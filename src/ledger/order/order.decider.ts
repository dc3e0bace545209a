import { accept, assertNever, Decider, Decision, refuse } from '../../shared/decider';
import { Minor } from '../../shared/money';

/** What a merchant asked for; "same target" compares sku, account and fields. */
export interface OrderTarget {
  skuId: string;
  accountId: string;
  accountFields: Record<string, string>;
}

export interface PlacedOrder extends OrderTarget {
  orderNo: string;
  merchantId: string;
  outTradeNo: string;
  amount: Minor;
  currency: string;
  /** 1 for the first placement; a refused attempt may be followed by another. */
  attempt: number;
  at: string;
}

/** Fail codes an upstream's definitive refusal may carry. */
export type UpstreamFailCode = 'INVALID_ACCOUNT' | 'UPSTREAM_REJECTED' | 'SKU_UNAVAILABLE';
/** Why delivery failed: the upstream's refusal, or an upstream that never took the request. */
export type DeliveryFailCode = UpstreamFailCode | 'UPSTREAM_UNAVAILABLE';
/** RESOLVED_FAILED is for staff resolutions only. */
export type FailCode = DeliveryFailCode | 'RESOLVED_FAILED';

export type OrderEvent =
  | { type: 'OrderPlaced'; data: PlacedOrder }
  | { type: 'OrderAccepted'; data: { attempt: number; at: string } }
  | { type: 'OrderRefused'; data: { attempt: number; code: string; at: string } }
  | { type: 'OrderSentUpstream'; data: { upstreamAttempt: number; at: string } }
  | { type: 'OrderResultUnknown'; data: { reason: string; evidence?: string; at: string } }
  | { type: 'OrderDeliveryConfirmed'; data: { at: string } }
  | { type: 'OrderDeliveryFailed'; data: { failCode: DeliveryFailCode; failReason: string; at: string } }
  | { type: 'OrderResolved'; data: { outcome: 'success' | 'failed'; resolvedBy: string; note: string; at: string } }
  | { type: 'OrderSucceeded'; data: { at: string } }
  | { type: 'OrderFailed'; data: { failCode: FailCode; failReason: string; at: string } };

export type OrderCommand =
  | { type: 'PlaceOrder'; order: Omit<PlacedOrder, 'attempt'> }
  | { type: 'AcceptOrder'; attempt: number; at: string }
  | { type: 'RefuseOrder'; attempt: number; code: string; at: string }
  | { type: 'RecordUpstreamAttempt'; at: string }
  | { type: 'MarkResultUnknown'; reason: string; evidence?: string; at: string }
  | { type: 'ConfirmDelivery'; at: string }
  | { type: 'RecordDeliveryFailure'; failCode: DeliveryFailCode; failReason: string; at: string }
  | { type: 'ResolveOrder'; outcome: 'success' | 'failed'; resolvedBy: string; note: string; at: string }
  | { type: 'CompleteOrder'; at: string };

export type OrderRefusalCode =
  | 'ORDER_EXISTS'
  | 'OUT_TRADE_NO_CONFLICT'
  | 'ORDER_NOT_FOUND'
  | 'ATTEMPT_NOT_PENDING'
  | 'ORDER_NOT_ACCEPTED'
  | 'RESULT_ALREADY_UNKNOWN'
  | 'RESOLUTION_REQUIRED'
  | 'ORDER_NOT_IN_RECONCILIATION'
  | 'OUTCOME_ALREADY_DECIDED'
  | 'OUTCOME_NOT_DECIDED'
  | 'ORDER_ALREADY_FINAL';

/**
 * Internal stages. Merchants see `processing` for accepted..failing; placed
 * and refused attempts are not orders to them at all.
 */
export type OrderStage = 'none' | 'placed' | 'refused' | 'accepted' | 'sent' | 'unknown' | 'succeeding' | 'failing' | 'succeeded' | 'failed';

export interface OrderState {
  stage: OrderStage;
  order?: PlacedOrder;
  upstreamAttempts: number;
  /** Why the latest attempt was refused, e.g. INSUFFICIENT_BALANCE. */
  refusalCode?: string;
  failCode?: FailCode;
  failReason?: string;
  /** The staff member who settled an unknown result, if one did. */
  resolvedBy?: string;
  completedAt?: string;
}

export const initialOrderState = (): OrderState => ({ stage: 'none', upstreamAttempts: 0 });

export const RESOLVED_FAILED_REASON = 'The upstream result could not be confirmed; reconciliation failed the order';

export function sameTarget(a: OrderTarget, b: OrderTarget): boolean {
  if (a.skuId !== b.skuId || a.accountId !== b.accountId) return false;
  const keys = Object.keys(a.accountFields);
  return (
    keys.length === Object.keys(b.accountFields).length &&
    keys.every((k) => Object.prototype.hasOwnProperty.call(b.accountFields, k) && a.accountFields[k] === b.accountFields[k])
  );
}

export type MerchantStatus = 'processing' | 'success' | 'failed';

/** The status a merchant sees, or undefined when there is no order to show. */
export function merchantStatus(stage: OrderStage): MerchantStatus | undefined {
  switch (stage) {
    case 'none':
    case 'placed':
    case 'refused':
      return undefined;
    case 'succeeded':
      return 'success';
    case 'failed':
      return 'failed';
    default:
      return 'processing';
  }
}

const IN_FULFILMENT: readonly OrderStage[] = ['accepted', 'sent'];
const DECIDED: readonly OrderStage[] = ['succeeding', 'failing'];
const FINAL: readonly OrderStage[] = ['succeeded', 'failed'];

type OrderDecision = Decision<OrderEvent, OrderRefusalCode>;

/** Why an order that is not in fulfilment cannot take an upstream outcome. */
function notInFulfilment(state: OrderState): OrderDecision {
  if (state.stage === 'unknown') return refuse('RESOLUTION_REQUIRED', 'the upstream result is unknown: only reconciliation can settle this order');
  if (DECIDED.includes(state.stage)) return refuse('OUTCOME_ALREADY_DECIDED', 'the outcome of this order is already decided');
  if (FINAL.includes(state.stage)) return refuse('ORDER_ALREADY_FINAL', `the order is already ${state.stage}`);
  return refuse('ORDER_NOT_ACCEPTED', 'the order has not been accepted');
}

function decide(command: OrderCommand, state: OrderState): OrderDecision {
  if (command.type !== 'PlaceOrder' && state.stage === 'none') return refuse('ORDER_NOT_FOUND', 'no such order');
  switch (command.type) {
    case 'PlaceOrder': {
      if (state.stage === 'none' || state.stage === 'refused') {
        return accept({ type: 'OrderPlaced', data: { ...command.order, attempt: (state.order?.attempt ?? 0) + 1 } });
      }
      return sameTarget(state.order!, command.order)
        ? refuse('ORDER_EXISTS', 'an order with this out_trade_no and target exists')
        : refuse('OUT_TRADE_NO_CONFLICT', 'out_trade_no was already used for a different target');
    }
    case 'AcceptOrder':
    case 'RefuseOrder': {
      if (state.stage !== 'placed' || state.order?.attempt !== command.attempt) {
        return refuse('ATTEMPT_NOT_PENDING', `attempt ${command.attempt} is no longer pending`);
      }
      return command.type === 'AcceptOrder'
        ? accept({ type: 'OrderAccepted', data: { attempt: command.attempt, at: command.at } })
        : accept({ type: 'OrderRefused', data: { attempt: command.attempt, code: command.code, at: command.at } });
    }
    case 'RecordUpstreamAttempt':
      if (!IN_FULFILMENT.includes(state.stage)) return notInFulfilment(state);
      return accept({ type: 'OrderSentUpstream', data: { upstreamAttempt: state.upstreamAttempts + 1, at: command.at } });
    case 'MarkResultUnknown':
      if (state.stage === 'unknown') return refuse('RESULT_ALREADY_UNKNOWN', 'the order is already awaiting reconciliation');
      if (!IN_FULFILMENT.includes(state.stage)) return notInFulfilment(state);
      return accept({
        type: 'OrderResultUnknown',
        data:
          command.evidence === undefined ? { reason: command.reason, at: command.at } : { reason: command.reason, evidence: command.evidence, at: command.at },
      });
    case 'ConfirmDelivery':
      if (!IN_FULFILMENT.includes(state.stage)) return notInFulfilment(state);
      return accept({ type: 'OrderDeliveryConfirmed', data: { at: command.at } });
    case 'RecordDeliveryFailure':
      if (!IN_FULFILMENT.includes(state.stage)) return notInFulfilment(state);
      return accept({
        type: 'OrderDeliveryFailed',
        data: { failCode: command.failCode, failReason: command.failReason, at: command.at },
      });
    case 'ResolveOrder': {
      if (state.stage !== 'unknown') {
        if (DECIDED.includes(state.stage) || FINAL.includes(state.stage)) return notInFulfilment(state);
        return refuse('ORDER_NOT_IN_RECONCILIATION', 'only orders with an unknown upstream result can be resolved');
      }
      const { outcome, resolvedBy, note, at } = command;
      return accept({ type: 'OrderResolved', data: { outcome, resolvedBy, note, at } });
    }
    case 'CompleteOrder':
      if (state.stage === 'succeeding') return accept({ type: 'OrderSucceeded', data: { at: command.at } });
      if (state.stage === 'failing') {
        return accept({ type: 'OrderFailed', data: { failCode: state.failCode!, failReason: state.failReason!, at: command.at } });
      }
      if (FINAL.includes(state.stage)) return refuse('ORDER_ALREADY_FINAL', `the order is already ${state.stage}`);
      return refuse('OUTCOME_NOT_DECIDED', 'the outcome of this order is not decided yet');
    default:
      return assertNever(command);
  }
}

function evolve(state: OrderState, event: OrderEvent): OrderState {
  switch (event.type) {
    case 'OrderPlaced':
      return { stage: 'placed', order: event.data, upstreamAttempts: 0 };
    case 'OrderAccepted':
      return { ...state, stage: 'accepted' };
    case 'OrderRefused':
      return { ...state, stage: 'refused', refusalCode: event.data.code };
    case 'OrderSentUpstream':
      return { ...state, stage: 'sent', upstreamAttempts: event.data.upstreamAttempt };
    case 'OrderResultUnknown':
      return { ...state, stage: 'unknown' };
    case 'OrderDeliveryConfirmed':
      return { ...state, stage: 'succeeding' };
    case 'OrderDeliveryFailed':
      return { ...state, stage: 'failing', failCode: event.data.failCode, failReason: event.data.failReason };
    case 'OrderResolved':
      return event.data.outcome === 'success'
        ? { ...state, stage: 'succeeding', resolvedBy: event.data.resolvedBy }
        : { ...state, stage: 'failing', failCode: 'RESOLVED_FAILED', failReason: RESOLVED_FAILED_REASON, resolvedBy: event.data.resolvedBy };
    case 'OrderSucceeded':
      return { ...state, stage: 'succeeded', completedAt: event.data.at };
    case 'OrderFailed':
      return { ...state, stage: 'failed', completedAt: event.data.at };
    default:
      return assertNever(event);
  }
}

export const orderDecider: Decider<OrderState, OrderCommand, OrderEvent, OrderRefusalCode> = {
  initialState: initialOrderState,
  evolve,
  decide,
};
