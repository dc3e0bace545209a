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

/**
 * What staff rest a resolution on: an upstream report's line, a re-query's
 * answer, or a person's own finding. Kept in the event as given, for auditors.
 */
export type ResolutionEvidence =
  | { source: 'report'; reportId: string; line: number; status: string; reference?: string }
  | { source: 'requery'; jobId: string; upstream: Record<string, unknown> };

/**
 * A person's decision on an order whose upstream result is unknown: who
 * decided (`resolvedBy`), why, on what evidence, and who approved it when
 * the four-eyes rule asked for a second person (`approvedBy`).
 */
export interface OrderResolution {
  outcome: 'success' | 'failed';
  resolvedBy: string;
  note: string;
  evidence?: ResolutionEvidence;
  approvedBy?: string;
}

export type OrderEvent =
  | { type: 'OrderPlaced'; data: PlacedOrder }
  | { type: 'OrderAccepted'; data: { attempt: number; at: string } }
  | { type: 'OrderRefused'; data: { attempt: number; code: string; at: string } }
  | { type: 'OrderSentUpstream'; data: { upstreamAttempt: number; at: string } }
  | { type: 'OrderResultUnknown'; data: { reason: string; evidence?: string; at: string } }
  | { type: 'OrderDeliveryConfirmed'; data: { at: string } }
  | { type: 'OrderDeliveryFailed'; data: { failCode: DeliveryFailCode; failReason: string; at: string } }
  | { type: 'OrderResolved'; data: OrderResolution & { at: string } }
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
  | ({ type: 'ResolveOrder'; at: string } & OrderResolution)
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

/** What every order that was placed holds, whatever its stage. */
interface Placed {
  order: PlacedOrder;
  /** Upstream sends so far: 0 until the order is first sent. */
  upstreamAttempts: number;
}

/** The outcome is decided: success, by the upstream or by staff (`resolvedBy`). */
interface Succeeding extends Placed {
  resolvedBy?: string;
}

/** The outcome is decided: failure, with the code and reason the merchant will see. */
interface Failing extends Placed {
  failCode: FailCode;
  failReason: string;
  resolvedBy?: string;
}

/**
 * An order's state, keyed on its stage: the compiler knows what each stage
 * holds. Merchants see `processing` for accepted..failing; placed and
 * refused attempts are not orders to them at all. `succeeding` and
 * `failing` mean "decided, the wallet not settled yet".
 */
export type OrderState =
  | { stage: 'none' }
  | ({ stage: 'placed' } & Placed)
  /** `refusalCode`: why the latest attempt was refused, e.g. INSUFFICIENT_BALANCE. */
  | ({ stage: 'refused'; refusalCode: string } & Placed)
  | ({ stage: 'accepted' | 'sent' | 'unknown' } & Placed)
  | ({ stage: 'succeeding' } & Succeeding)
  | ({ stage: 'failing' } & Failing)
  | ({ stage: 'succeeded'; completedAt: string } & Succeeding)
  | ({ stage: 'failed'; completedAt: string } & Failing);

export type OrderStage = OrderState['stage'];
/** An order that exists: any stage but none. */
export type PlacedOrderState = Exclude<OrderState, { stage: 'none' }>;
export type FinalOrderState = Extract<OrderState, { stage: 'succeeded' | 'failed' }>;
export type DecidedOrderState = Extract<OrderState, { stage: 'succeeding' | 'failing' }>;

/** The one definition of "final": nothing follows these stages. */
export const FINAL_STAGES: readonly OrderStage[] = ['succeeded', 'failed'];
export const isFinal = (state: OrderState): state is FinalOrderState => FINAL_STAGES.includes(state.stage);
export const isFinalStage = (stage: unknown): boolean => FINAL_STAGES.includes(stage as OrderStage);
/** Decided, not yet settled on the wallet. */
export const isDecided = (state: OrderState): state is DecidedOrderState => state.stage === 'succeeding' || state.stage === 'failing';

/** The failure a failing or failed order carries, for views that show any stage. */
export const failureOf = (state: OrderState): { failCode: FailCode; failReason: string } | undefined =>
  state.stage === 'failing' || state.stage === 'failed' ? { failCode: state.failCode, failReason: state.failReason } : undefined;

export const initialOrderState = (): OrderState => ({ stage: 'none' });

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

/**
 * The events that make an order final (that evolve into FINAL_STAGES), for
 * readers that see events rather than states, such as the callback schedule.
 */
export const endsOrder = (event: OrderEvent): boolean => event.type === 'OrderSucceeded' || event.type === 'OrderFailed';

const IN_FULFILMENT: readonly OrderStage[] = ['accepted', 'sent'];

type OrderDecision = Decision<OrderEvent, OrderRefusalCode>;

/** Why an order that is not in fulfilment cannot take an upstream outcome. */
function notInFulfilment(state: OrderState): OrderDecision {
  if (state.stage === 'unknown') return refuse('RESOLUTION_REQUIRED', 'the upstream result is unknown: only reconciliation can settle this order');
  if (isDecided(state)) return refuse('OUTCOME_ALREADY_DECIDED', 'the outcome of this order is already decided');
  if (isFinal(state)) return refuse('ORDER_ALREADY_FINAL', `the order is already ${state.stage}`);
  return refuse('ORDER_NOT_ACCEPTED', 'the order has not been accepted');
}

function decide(command: OrderCommand, state: OrderState): OrderDecision {
  if (command.type === 'PlaceOrder') return decidePlacement(command, state);
  if (state.stage === 'none') return refuse('ORDER_NOT_FOUND', 'no such order');
  switch (command.type) {
    case 'AcceptOrder':
    case 'RefuseOrder': {
      if (state.stage !== 'placed' || state.order.attempt !== command.attempt) {
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
        if (isDecided(state) || isFinal(state)) return notInFulfilment(state);
        return refuse('ORDER_NOT_IN_RECONCILIATION', 'only orders with an unknown upstream result can be resolved');
      }
      const { type: _type, ...resolution } = command;
      return accept({ type: 'OrderResolved', data: withoutUndefined(resolution) });
    }
    case 'CompleteOrder':
      if (state.stage === 'succeeding') return accept({ type: 'OrderSucceeded', data: { at: command.at } });
      if (state.stage === 'failing') return accept({ type: 'OrderFailed', data: { failCode: state.failCode, failReason: state.failReason, at: command.at } });
      if (isFinal(state)) return refuse('ORDER_ALREADY_FINAL', `the order is already ${state.stage}`);
      return refuse('OUTCOME_NOT_DECIDED', 'the outcome of this order is not decided yet');
    default:
      return assertNever(command);
  }
}

/** Absent optional fields stay absent in the stored data (and the hash that covers it). */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** A first placement, or the next attempt after a refused one; anything else is the same order again or a conflict. */
function decidePlacement(command: Extract<OrderCommand, { type: 'PlaceOrder' }>, state: OrderState): OrderDecision {
  if (state.stage === 'none' || state.stage === 'refused') {
    const attempt = state.stage === 'none' ? 1 : state.order.attempt + 1;
    return accept({ type: 'OrderPlaced', data: { ...command.order, attempt } });
  }
  return sameTarget(state.order, command.order)
    ? refuse('ORDER_EXISTS', 'an order with this out_trade_no and target exists')
    : refuse('OUT_TRADE_NO_CONFLICT', 'out_trade_no was already used for a different target');
}

function evolve(state: OrderState, event: OrderEvent): OrderState {
  if (event.type === 'OrderPlaced') return { stage: 'placed', order: event.data, upstreamAttempts: 0 };
  // Every other event follows a placement: the log says so, or it is broken.
  if (state.stage === 'none') throw new Error(`${event.type} on an order that was never placed`);
  const { order, upstreamAttempts } = state;
  const resolvedBy = 'resolvedBy' in state ? state.resolvedBy : undefined;
  switch (event.type) {
    case 'OrderAccepted':
      return { stage: 'accepted', order, upstreamAttempts };
    case 'OrderRefused':
      return { stage: 'refused', order, upstreamAttempts, refusalCode: event.data.code };
    case 'OrderSentUpstream':
      return { stage: 'sent', order, upstreamAttempts: event.data.upstreamAttempt };
    case 'OrderResultUnknown':
      return { stage: 'unknown', order, upstreamAttempts };
    case 'OrderDeliveryConfirmed':
      return { stage: 'succeeding', order, upstreamAttempts };
    case 'OrderDeliveryFailed':
      return { stage: 'failing', order, upstreamAttempts, failCode: event.data.failCode, failReason: event.data.failReason };
    case 'OrderResolved': {
      const by = event.data.resolvedBy;
      return event.data.outcome === 'success'
        ? { stage: 'succeeding', order, upstreamAttempts, resolvedBy: by }
        : { stage: 'failing', order, upstreamAttempts, failCode: 'RESOLVED_FAILED', failReason: RESOLVED_FAILED_REASON, resolvedBy: by };
    }
    case 'OrderSucceeded':
      return { stage: 'succeeded', order, upstreamAttempts, ...(resolvedBy === undefined ? {} : { resolvedBy }), completedAt: event.data.at };
    case 'OrderFailed': {
      const { failCode, failReason } = event.data;
      return {
        stage: 'failed',
        order,
        upstreamAttempts,
        failCode,
        failReason,
        ...(resolvedBy === undefined ? {} : { resolvedBy }),
        completedAt: event.data.at,
      };
    }
    default:
      return assertNever(event);
  }
}

export const orderDecider: Decider<OrderState, OrderCommand, OrderEvent, OrderRefusalCode> = {
  initialState: initialOrderState,
  evolve,
  decide,
};
