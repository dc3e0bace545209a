import { accept, assertNever, Decider, Decision, refuse } from '../../shared/decider';
import { Minor } from '../../shared/money';

/**
 * The four-eyes rule on staff money movements: a request that waits for a
 * second person, one stream per request (`approval-{approval_id}`). Nothing
 * here moves money: the movement is carried out after ApprovalGranted, by
 * the slice that owns the kind, and recorded back as ApprovalCarriedOut.
 */

export const APPROVAL_KINDS = ['resolution', 'bulk_resolution', 'deposit', 'adjustment'] as const;
export type ApprovalKind = (typeof APPROVAL_KINDS)[number];

/**
 * Who may decide each kind: another person than the requester, in one of
 * these roles (admin may always). Who may ask is the rule of the route
 * that asks. A reconciler asks for adjustments, but only an admin grants one.
 */
export const APPROVER_ROLES: Readonly<Record<ApprovalKind, readonly string[]>> = {
  resolution: ['reconciler', 'admin'],
  bulk_resolution: ['reconciler', 'admin'],
  deposit: ['admin'],
  adjustment: ['admin'],
};

/** What would move in one currency. */
export interface AmountInCurrency {
  currency: string;
  amount: Minor;
}

/**
 * An amount as the event stores it: minor units in decimal text. The event
 * codec turns top-level `amount` fields into bigints and back, not amounts
 * nested in a list, so the request keeps them as text (amountsOf reads them).
 */
export interface StoredAmount {
  currency: string;
  amount: string;
}

export interface ApprovalRequestData {
  approvalId: string;
  kind: ApprovalKind;
  /** One line for the inbox. */
  summary: string;
  /** Absent for a bulk action over several merchants. */
  merchantId?: string;
  amounts: StoredAmount[];
  /** JSON: what the kind's executor needs to carry it out. */
  payload: Record<string, unknown>;
  requestedBy: string;
  note: string;
  at: string;
}

/**
 * How carrying it out went: what the executor reported, or the ledger's
 * refusal (an order resolved meanwhile by someone else, a balance too low
 * by now). A refusal is final: the approval does not try again.
 */
export type ApprovalResult = { ok: true; detail: Record<string, unknown> } | { ok: false; code: string; message: string };

// Events. Type strings are stable forever: they are stored in the event log.
export type ApprovalEvent =
  | { type: 'ApprovalRequested'; data: ApprovalRequestData }
  | { type: 'ApprovalGranted'; data: { approvedBy: string; note: string; at: string } }
  | { type: 'ApprovalRejected'; data: { rejectedBy: string; note: string; at: string } }
  | { type: 'ApprovalCarriedOut'; data: { result: ApprovalResult; at: string } };

/** A person's decision on a request. */
export interface ApprovalDecision {
  by: string;
  note: string;
  at: string;
}

export type ApprovalCommand =
  | ({ type: 'RequestApproval'; amounts: AmountInCurrency[] } & Omit<ApprovalRequestData, 'amounts'>)
  /** `role`: the deciding staff member's. */
  | { type: 'GrantApproval'; by: string; role: string; note: string; at: string }
  | { type: 'RejectApproval'; by: string; role: string; note: string; at: string }
  | { type: 'RecordCarriedOut'; result: ApprovalResult; at: string };

export type ApprovalRefusalCode =
  | 'APPROVAL_EXISTS'
  | 'APPROVAL_NOT_FOUND'
  | 'INVALID_AMOUNT'
  | 'SELF_APPROVAL'
  | 'APPROVAL_ROLE_NOT_ALLOWED'
  | 'APPROVAL_ALREADY_DECIDED'
  | 'APPROVAL_NOT_GRANTED';

/** An approval's state, keyed on its stage: a granted one always has its grant, a carried-out one its result. */
export type ApprovalState =
  | { stage: 'none' }
  | { stage: 'pending'; request: ApprovalRequestData }
  | { stage: 'granted'; request: ApprovalRequestData; granted: ApprovalDecision }
  | { stage: 'rejected'; request: ApprovalRequestData; rejected: ApprovalDecision }
  | { stage: 'carried_out'; request: ApprovalRequestData; granted: ApprovalDecision; result: ApprovalResult; carriedOutAt: string };

export type ApprovalStage = ApprovalState['stage'];

const NONE: ApprovalState = Object.freeze({ stage: 'none' });

type ApprovalDecisionResult = Decision<ApprovalEvent, ApprovalRefusalCode>;

function decide(command: ApprovalCommand, state: ApprovalState): ApprovalDecisionResult {
  if (command.type === 'RequestApproval') {
    if (state.stage !== 'none') return refuse('APPROVAL_EXISTS', `approval ${command.approvalId} exists already`);
    if (command.amounts.some((a) => a.amount < 0n)) return refuse('INVALID_AMOUNT', 'an amount to approve cannot be negative');
    const { approvalId, kind, summary, merchantId, amounts, payload, requestedBy, note, at } = command;
    const stored = amounts.map((a) => ({ currency: a.currency, amount: a.amount.toString() }));
    // No key for an absent merchant: the stored data holds what was asked.
    return accept({
      type: 'ApprovalRequested',
      data: { approvalId, kind, summary, ...(merchantId === undefined ? {} : { merchantId }), amounts: stored, payload, requestedBy, note, at },
    });
  }
  if (state.stage === 'none') return refuse('APPROVAL_NOT_FOUND', 'no such approval');
  switch (command.type) {
    case 'GrantApproval':
    case 'RejectApproval': {
      if (state.stage !== 'pending') return refuse('APPROVAL_ALREADY_DECIDED', `the request is ${describe(state)} already`);
      const { request } = state;
      const withdrawn = command.type === 'RejectApproval' && command.by === request.requestedBy;
      if (command.type === 'GrantApproval' && command.by === request.requestedBy) {
        return refuse('SELF_APPROVAL', 'a request must be approved by another person than the one who made it');
      }
      // The requester may withdraw their own request; anyone else deciding needs a role that may do the action.
      if (!withdrawn && command.role !== 'admin' && !APPROVER_ROLES[request.kind].includes(command.role)) {
        return refuse(
          'APPROVAL_ROLE_NOT_ALLOWED',
          `a ${command.role} may not decide a ${request.kind} request (${APPROVER_ROLES[request.kind].join(' or ')} may)`,
        );
      }
      const { by, note, at } = command;
      return command.type === 'GrantApproval'
        ? accept({ type: 'ApprovalGranted', data: { approvedBy: by, note, at } })
        : accept({ type: 'ApprovalRejected', data: { rejectedBy: by, note, at } });
    }
    case 'RecordCarriedOut':
      // Recorded once; whoever carries it out again (a retry, a sweep) finds it done.
      if (state.stage === 'carried_out') return accept();
      if (state.stage !== 'granted') return refuse('APPROVAL_NOT_GRANTED', `the request is ${describe(state)}, not approved`);
      return accept({ type: 'ApprovalCarriedOut', data: { result: command.result, at: command.at } });
    default:
      return assertNever(command);
  }
}

/** The request's amounts as bigints. */
export const amountsOf = (request: ApprovalRequestData): AmountInCurrency[] =>
  request.amounts.map(({ currency, amount }) => ({ currency, amount: BigInt(amount) }));

const describe = (state: ApprovalState) => (state.stage === 'granted' || state.stage === 'carried_out' ? 'approved' : state.stage);

function evolve(state: ApprovalState, event: ApprovalEvent): ApprovalState {
  switch (event.type) {
    case 'ApprovalRequested':
      return { stage: 'pending', request: event.data };
    case 'ApprovalGranted':
      return { stage: 'granted', request: requestOf(state, event), granted: { by: event.data.approvedBy, note: event.data.note, at: event.data.at } };
    case 'ApprovalRejected':
      return { stage: 'rejected', request: requestOf(state, event), rejected: { by: event.data.rejectedBy, note: event.data.note, at: event.data.at } };
    case 'ApprovalCarriedOut':
      if (state.stage !== 'granted') throw new Error(`ApprovalCarriedOut in an approval that is ${state.stage}`);
      return { stage: 'carried_out', request: state.request, granted: state.granted, result: event.data.result, carriedOutAt: event.data.at };
    default:
      return assertNever(event);
  }
}

/** A broken log, not a refusal: decide never decides on a request that was not made. */
function requestOf(state: ApprovalState, event: ApprovalEvent): ApprovalRequestData {
  if (state.stage !== 'pending') throw new Error(`${event.type} in an approval that is ${state.stage}`);
  return state.request;
}

export const approvalDecider = {
  initialState: (): ApprovalState => NONE,
  evolve,
  decide,
} satisfies Decider<ApprovalState, ApprovalCommand, ApprovalEvent, ApprovalRefusalCode>;
