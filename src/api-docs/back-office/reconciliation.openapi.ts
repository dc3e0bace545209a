import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { anyObject, array, closed, integer, money, nullable, open, position, ref, Schema, string, stringMap, timestamp } from '../schema-kit';
import { approvalRequired, merchantName, ok, operation, orderNo, PathItems, query, refusals, staffName } from './route-kit';

export const orderDetail: Schema = closed({
  order_no: string(),
  merchant_id: string(),
  merchant_name: merchantName,
  out_trade_no: string(),
  stage: string({ description: 'The internal stage: placed, accepted, sent, unknown, succeeding, succeeded, failing, failed, refused ...' }),
  status: nullable({ enum: ['processing', 'success', 'failed'] }),
  sku_id: string(),
  account_id: string(),
  account_fields: stringMap,
  amount: money,
  currency: string(),
  attempt: integer(),
  upstream_attempts: integer(),
  fail_code: nullable(string()),
  fail_reason: nullable(string()),
  created_at: timestamp,
  completed_at: nullable(timestamp),
  resolution: nullable(
    closed(
      {
        outcome: { enum: ['success', 'failed'] },
        resolved_by: string(),
        resolved_by_name: staffName('resolved_by'),
        resolved_at: string(),
        note: string(),
        approved_by: string({ description: 'The second person who approved it (APPROVAL_THRESHOLD); absent when none was needed' }),
        approved_by_name: staffName('approved_by'),
        evidence: { ...anyObject, description: "What it rests on: an upstream report's line or a re-query's answer; absent for a person's own finding" },
      },
      ['approved_by', 'approved_by_name', 'evidence'],
    ),
  ),
  history: array(
    closed({
      revision: integer(),
      position,
      type: string(),
      recorded_at: timestamp,
      data: anyObject,
      staff_name: nullable(
        string({ description: 'The name of the staff member the event names (resolved_by in an OrderResolved); null for an event no person made' }),
      ),
      approved_by_name: nullable(string({ description: 'The name of the second person the event names (approved_by); null when none did' })),
    }),
  ),
  adjustments: array(
    closed({
      revision: integer({ description: "The adjustment's revision in its wallet's stream, as on the statement" }),
      position,
      recorded_at: timestamp,
      reference: string(),
      direction: { enum: ['credit', 'debit'] },
      amount: money,
      reason: string(),
      note: string(),
      adjusted_by: string(),
      adjusted_by_name: staffName('adjusted_by'),
      approved_by: nullable(string()),
      approved_by_name: staffName('approved_by'),
      at: string(),
    }),
    { description: 'The wallet adjustments that correct this order, first to last' },
  ),
});

/** Orders whose upstream result is unknown: the queue, an order, its resolution and the upstream's answer. */
export function reconciliationPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.reconciliationQueue)]: {
      get: operation({
        summary: 'The queue of orders whose upstream result is unknown, oldest first',
        roles: ['reconciler'],
        parameters: [
          query('limit', 'At most this many (default 100, at most 500)', string({ pattern: '^\\d+$' })),
          query('offset', 'Skip this many', string({ pattern: '^\\d+$' })),
        ],
        responses: {
          200: ok(
            'A page of the queue',
            closed({
              total: integer(),
              orders: array(
                closed({
                  order_no: string(),
                  merchant_id: string(),
                  merchant_name: merchantName,
                  out_trade_no: string(),
                  sku_id: string(),
                  account_id: string(),
                  account_fields: stringMap,
                  amount: money,
                  currency: string(),
                  upstream_attempts: integer(),
                  reason: nullable(string()),
                  evidence: nullable(string()),
                  created_at: timestamp,
                  result_unknown_at: timestamp,
                  age_seconds: integer(),
                }),
              ),
            }),
          ),
          ...refusals({}),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.order)]: {
      get: operation({
        summary: 'An order as staff see it, with its whole history',
        roles: ['reconciler', 'auditor'],
        parameters: [orderNo],
        responses: { 200: ok('The order', ref('OrderDetail')), ...refusals({ 404: { codes: ['ORDER_NOT_FOUND'], description: 'no such order' } }) },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.resolveOrder)]: {
      post: operation({
        summary: 'Settle an unknown-result order',
        description:
          "Who, when and why are recorded as an event; the order then settles or releases like an upstream outcome. Over APPROVAL_THRESHOLD (the order's amount) it waits for another person (202).",
        roles: ['reconciler'],
        parameters: [orderNo],
        responses: {
          200: ok('The order as resolved', ref('OrderDetail')),
          202: approvalRequired,
          ...refusals(
            {
              404: { codes: ['ORDER_NOT_FOUND'], description: 'no such order' },
              409: {
                codes: [
                  'ORDER_NOT_IN_RECONCILIATION',
                  'OUTCOME_ALREADY_DECIDED',
                  'ORDER_ALREADY_FINAL',
                  'ORDER_NOT_ACCEPTED',
                  'RESOLUTION_REQUIRED',
                  'APPROVAL_PENDING',
                ],
                description: 'The order is not waiting for a resolution, or another resolution of it waits for approval',
              },
            },
            { body: true },
          ),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.requeryOrder)]: {
      post: operation({
        summary: 'Ask the upstream what became of an order',
        description: 'Informs a person; settles nothing.',
        roles: ['reconciler'],
        parameters: [orderNo],
        responses: {
          200: ok(
            'What the upstream says',
            closed({
              order_no: string(),
              stage: string(),
              upstream: open({ status: { enum: ['delivered', 'refused', 'pending', 'not_received', 'unknown'] } }),
            }),
          ),
          ...refusals({ 404: { codes: ['ORDER_NOT_FOUND'], description: 'no such order' } }),
        },
      }),
    },
  };
}
