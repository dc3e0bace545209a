import { fold } from '../../shared/decider';
import { specify } from '../../../test/support/decider-specification';
import { ApprovalCommand, approvalDecider, ApprovalEvent, ApprovalKind, ApprovalRefusalCode, amountsOf } from './approval.decider';

const AT = '2026-11-22T10:00:00.000+00:00';
const LATER = '2026-11-22T10:05:00.000+00:00';
const CLERK = 'stf_clerk';
const OTHER_CLERK = 'stf_other_clerk';
const ADMIN = 'stf_admin';

const spec = specify(approvalDecider);

// Commands.
const request = (kind: ApprovalKind = 'resolution', requestedBy = CLERK): ApprovalCommand => ({
  type: 'RequestApproval',
  approvalId: 'apr_1',
  kind,
  summary: 'Resolve order T1 as success',
  merchantId: 'mch_1',
  amounts: [{ currency: 'USD', amount: 12_50n }],
  payload: { order_no: 'T1', outcome: 'success' },
  requestedBy,
  note: 'the provider confirmed it',
  at: AT,
});
const grant = (by: string, role: string): ApprovalCommand => ({ type: 'GrantApproval', by, role, note: 'checked', at: LATER });
const reject = (by: string, role: string): ApprovalCommand => ({ type: 'RejectApproval', by, role, note: 'not convinced', at: LATER });
const carriedOut = (): ApprovalCommand => ({ type: 'RecordCarriedOut', result: { ok: true, detail: { stage: 'succeeded' } }, at: LATER });

// Events.
const requested = (kind: ApprovalKind = 'resolution', requestedBy = CLERK): ApprovalEvent => ({
  type: 'ApprovalRequested',
  data: {
    approvalId: 'apr_1',
    kind,
    summary: 'Resolve order T1 as success',
    merchantId: 'mch_1',
    amounts: [{ currency: 'USD', amount: '1250' }],
    payload: { order_no: 'T1', outcome: 'success' },
    requestedBy,
    note: 'the provider confirmed it',
    at: AT,
  },
});
const granted = (by = OTHER_CLERK): ApprovalEvent => ({ type: 'ApprovalGranted', data: { approvedBy: by, note: 'checked', at: LATER } });
const rejected = (by = OTHER_CLERK): ApprovalEvent => ({ type: 'ApprovalRejected', data: { rejectedBy: by, note: 'not convinced', at: LATER } });
const done = (): ApprovalEvent => ({ type: 'ApprovalCarriedOut', data: { result: { ok: true, detail: { stage: 'succeeded' } }, at: LATER } });

describe('approval decider', () => {
  it('records a request, its amounts as minor units in text', () => {
    spec.given([]).when(request()).then([requested()]);
    const state = fold(approvalDecider, [requested()]);
    expect(state.stage).toBe('pending');
    if (state.stage === 'pending') expect(amountsOf(state.request)).toEqual([{ currency: 'USD', amount: 1250n }]);
  });

  it('leaves out a merchant it was not given (a bulk action over several merchants)', () => {
    const { merchantId: _merchantId, ...bulk } = request('bulk_resolution') as Extract<ApprovalCommand, { type: 'RequestApproval' }>;
    const decision = approvalDecider.decide(bulk, approvalDecider.initialState());
    expect(decision.ok && Object.keys(decision.events[0].data)).not.toContain('merchantId');
  });

  it('is granted by another person whose role may do the action', () => {
    spec.given([requested()]).when(grant(OTHER_CLERK, 'reconciler')).then([granted()]);
    spec
      .given([requested('adjustment')])
      .when(grant(ADMIN, 'admin'))
      .then([granted(ADMIN)]);
    spec
      .given([requested('deposit', ADMIN)])
      .when(grant('admin', 'admin'))
      .then([granted('admin')]);
  });

  it('is rejected by another person whose role may do the action, or withdrawn by its requester', () => {
    spec.given([requested()]).when(reject(OTHER_CLERK, 'reconciler')).then([rejected()]);
    spec
      .given([requested('adjustment')])
      .when(reject(CLERK, 'reconciler'))
      .then([rejected(CLERK)]);
  });

  it('records the carrying out once: a repeat changes nothing', () => {
    spec.given([requested(), granted()]).when(carriedOut()).then([done()]);
    spec.given([requested(), granted(), done()]).when(carriedOut()).then([]);
  });

  const refusals: [string, ApprovalEvent[], ApprovalCommand, ApprovalRefusalCode][] = [
    ['a second request under the same id', [requested()], request(), 'APPROVAL_EXISTS'],
    ['a negative amount', [], { ...request(), amounts: [{ currency: 'USD', amount: -1n }] } as ApprovalCommand, 'INVALID_AMOUNT'],
    ['a decision on no request', [], grant(OTHER_CLERK, 'reconciler'), 'APPROVAL_NOT_FOUND'],
    ['the requester approving their own request', [requested()], grant(CLERK, 'reconciler'), 'SELF_APPROVAL'],
    ['the built-in administrator approving its own deposit', [requested('deposit', 'admin')], grant('admin', 'admin'), 'SELF_APPROVAL'],
    ['a reconciler approving an adjustment', [requested('adjustment')], grant(OTHER_CLERK, 'reconciler'), 'APPROVAL_ROLE_NOT_ALLOWED'],
    ['a reconciler approving a deposit', [requested('deposit', ADMIN)], grant(CLERK, 'reconciler'), 'APPROVAL_ROLE_NOT_ALLOWED'],
    ['an auditor approving a resolution', [requested()], grant('stf_auditor', 'auditor'), 'APPROVAL_ROLE_NOT_ALLOWED'],
    ['an auditor rejecting a resolution', [requested()], reject('stf_auditor', 'auditor'), 'APPROVAL_ROLE_NOT_ALLOWED'],
    ['approving an approved request', [requested(), granted()], grant(ADMIN, 'admin'), 'APPROVAL_ALREADY_DECIDED'],
    ['approving a carried-out request', [requested(), granted(), done()], grant(ADMIN, 'admin'), 'APPROVAL_ALREADY_DECIDED'],
    ['rejecting an approved request', [requested(), granted()], reject(ADMIN, 'admin'), 'APPROVAL_ALREADY_DECIDED'],
    ['approving a rejected request', [requested(), rejected()], grant(ADMIN, 'admin'), 'APPROVAL_ALREADY_DECIDED'],
    ['the approver of a decided request, even its requester', [requested(), rejected()], grant(CLERK, 'reconciler'), 'APPROVAL_ALREADY_DECIDED'],
    ['carrying out a pending request', [requested()], carriedOut(), 'APPROVAL_NOT_GRANTED'],
    ['carrying out a rejected request', [requested(), rejected()], carriedOut(), 'APPROVAL_NOT_GRANTED'],
  ];
  it.each(refusals)('refuses %s', (_name, history, command, code) => {
    spec.given(history).when(command).thenRefused(code);
  });

  it('a carried-out request keeps its grant and result', () => {
    const state = fold(approvalDecider, [requested(), granted(), done()]);
    expect(state).toMatchObject({ stage: 'carried_out', granted: { by: OTHER_CLERK }, result: { ok: true }, carriedOutAt: LATER });
  });

  it('fails loudly on a broken log', () => {
    expect(() => fold(approvalDecider, [granted()])).toThrow(/ApprovalGranted in an approval that is none/);
    expect(() => fold(approvalDecider, [requested(), done()])).toThrow(/ApprovalCarriedOut in an approval that is pending/);
  });
});
