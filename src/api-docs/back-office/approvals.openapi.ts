import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { anyObject, array, closed, integer, money, nullable, ref, Schema, string, timestamp } from '../schema-kit';
import { approvalRequired, merchantId, merchantName, ok, operation, pathId, PathItems, query, refusals, staffName, wallet } from './route-kit';

const kind = { enum: ['resolution', 'bulk_resolution', 'deposit', 'adjustment'] };
const status = { enum: ['pending', 'approved', 'rejected', 'failed'] };

export const approval: Schema = closed({
  approval_id: string({ pattern: '^apr_[0-9a-f]{16}$' }),
  kind,
  status: {
    ...status,
    description:
      'pending until decided; approved once granted (carried_out_at says when the money moved); failed when the ledger refused the movement as it was carried out (result says why); rejected when declined, or withdrawn by its requester',
  },
  summary: string(),
  merchant_id: nullable(string()),
  merchant_name: merchantName,
  amounts: array(closed({ currency: string(), amount: money }), { description: 'What would move, per currency' }),
  payload: { ...anyObject, description: 'What carrying it out needs, as the requesting route recorded it (by kind)' },
  requested_by: string(),
  requested_by_name: staffName('requested_by'),
  requested_at: timestamp,
  note: string({ description: "The requester's reason; empty for a deposit asked without one" }),
  decided_by: nullable(string()),
  decided_by_name: staffName('decided_by'),
  decided_at: nullable(timestamp),
  decision_note: nullable(string()),
  carried_out_at: nullable(timestamp),
  result: nullable({
    anyOf: [
      closed({
        ok: { const: true },
        detail: { ...anyObject, description: "The kind's reply: a deposit's wallet, an adjustment's wallet and adjustment, a resolution's order stage" },
      }),
      closed({ ok: { const: false }, code: string(), message: string() }),
    ],
  }),
});

const adjustment = closed({
  reference: string(),
  direction: { enum: ['credit', 'debit'] },
  amount: money,
  currency: string(),
  reason: string(),
  note: string(),
  order_no: nullable(string()),
  adjusted_by: string(),
  adjusted_by_name: staffName('adjusted_by'),
  approved_by: nullable(string()),
  approved_by_name: staffName('approved_by'),
});

const approvalId = pathId('approval_id', 'The approval, `apr_` and 16 hex characters');
const decision = (verb: string, description: string, codes: Record<number, { codes: string[]; description: string }>) =>
  operation({
    summary: `${verb} a request`,
    description,
    roles: ['reconciler'],
    parameters: [approvalId],
    responses: {
      200: ok('The request as decided', ref('Approval')),
      ...refusals({ 404: { codes: ['APPROVAL_NOT_FOUND'], description: 'no such approval' }, ...codes }, { body: true }),
    },
  });

/** The four-eyes rule: the approvals inbox, and wallet adjustments (which it guards). */
export function approvalPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.approvals)]: {
      get: operation({
        summary: 'Requests for a second pair of eyes, waiting ones first, then newest first',
        description: 'Reconcilers see resolutions and adjustments, admins and auditors everything.',
        roles: ['reconciler', 'auditor'],
        parameters: [
          query('status', 'pending, approved, rejected, failed or all (default)', { enum: [...status.enum, 'all'] }),
          query('kind', 'Only this kind', kind),
          query('limit', 'At most this many (default 50, at most 200)', string({ pattern: '^\\d+$' })),
          query('offset', 'Skip this many', string({ pattern: '^\\d+$' })),
        ],
        responses: { 200: ok('A page of requests', closed({ total: integer(), approvals: array(ref('Approval')) })), ...refusals({}) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.approval)]: {
      get: operation({
        summary: 'One request',
        roles: ['reconciler', 'auditor'],
        parameters: [approvalId],
        responses: { 200: ok('The request', ref('Approval')), ...refusals({ 404: { codes: ['APPROVAL_NOT_FOUND'], description: 'no such approval' } }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.approveApproval)]: {
      post: decision(
        'Approve',
        'By another person than the requester whose role may do the action; the movement is carried out in this request, with requester and approver in its event.',
        {
          403: { codes: ['SELF_APPROVAL', 'APPROVAL_ROLE_NOT_ALLOWED'], description: "the requester's own request, or a role that may not decide this kind" },
          409: { codes: ['APPROVAL_ALREADY_DECIDED'], description: 'approved or rejected already' },
        },
      ),
    },
    [documentedPath(BACK_OFFICE_ROUTES.rejectApproval)]: {
      post: decision('Reject', 'Nothing moves. The requester may withdraw their own request this way.', {
        403: { codes: ['APPROVAL_ROLE_NOT_ALLOWED'], description: 'a role that may not decide this kind' },
        409: { codes: ['APPROVAL_ALREADY_DECIDED'], description: 'approved or rejected already' },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.adjustments)]: {
      post: operation({
        summary: "Correct a wallet's balance: a credit or a debit",
        description:
          'A WalletAdjusted event, on the statement and in the hash chain; for a final order the upstream contradicts, at most once per order and reason. The same reference and terms again moves no money.',
        roles: ['reconciler'],
        parameters: [merchantId],
        responses: {
          201: ok('The wallet after the adjustment, and the adjustment', closed({ wallet, adjustment })),
          202: approvalRequired,
          ...refusals(
            {
              402: { codes: ['INSUFFICIENT_BALANCE'], description: 'a debit beyond the available balance' },
              404: { codes: ['MERCHANT_NOT_FOUND', 'ORDER_NOT_FOUND'], description: 'no such merchant, or no such order (`field`: order_no)' },
              409: {
                codes: ['ADJUSTMENT_REFERENCE_CONFLICT', 'ORDER_ALREADY_ADJUSTED', 'ORDER_NOT_FINAL', 'APPROVAL_PENDING'],
                description:
                  'the reference used for another adjustment, the order corrected for this reason already, an order not final, or another request under the reference waits',
              },
              422: { codes: ['ORDER_OF_ANOTHER_MERCHANT'], description: 'the order is not of this merchant (`field`: order_no)' },
            },
            { body: true },
          ),
        },
      }),
    },
  };
}
