import { BACK_OFFICE_ROUTES, documentedPath } from '../../back-office/routes.public';
import { anyObject, array, boolean, closed, integer, money, nullable, open, position, ref, response, Schema, string, success, timestamp } from '../schema-kit';
import { merchantId, ok, operation, PathItems, pathId, query, refusals, staffName } from './route-kit';

export const statementLine: Schema = closed({
  revision: integer(),
  position,
  recorded_at: timestamp,
  occurred_at: timestamp,
  type: string(),
  order_no: nullable(string()),
  reference: nullable(string()),
  reason: nullable(string()),
  amount: money,
  balance_after: money,
  frozen_after: money,
  available_after: money,
  data: anyObject,
  prev_hash: string({ pattern: '^[0-9a-f]{64}$' }),
  hash: string({ pattern: '^[0-9a-f]{64}$' }),
});

export const statement: Schema = closed({
  merchant_id: string(),
  currency: string(),
  lines: array(ref('StatementLine')),
  next_after_revision: nullable(integer()),
});

export const rebuild: Schema = closed(
  {
    rebuild_id: string({ pattern: '^rb_[0-9a-f]{16}$' }),
    status: { enum: ['running', 'done', 'failed'] },
    requested_by: string(),
    requested_by_name: staffName('requested_by'),
    started_at: timestamp,
    finished_at: nullable(timestamp),
    projections: array(closed({ name: string(), events: integer(), position: nullable(position) })),
    error: string(),
  },
  ['error'],
);

const statementFilters = [
  query('from', 'Lines recorded at or after this ISO 8601 time (with an offset)', string()),
  query('to', 'Lines recorded before this ISO 8601 time (with an offset)', string()),
  query('format', 'json (default) or csv', { enum: ['json', 'csv'] }),
];

/** A wallet's statement, its hash chain and its balance as of a moment, from the event store. */
export function walletHistoryPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.statement)]: {
      get: operation({
        summary: "A page of a wallet's statement, replayed from the event store",
        description: 'The cursor for the next page is next_after_revision (also the X-Next-After-Revision header, absent on the last page).',
        roles: ['auditor'],
        parameters: [
          merchantId,
          ...statementFilters,
          query('after_revision', 'The cursor: next_after_revision of the previous page', string({ pattern: '^\\d+$' })),
          query('limit', 'Lines per page, 1 to 100000 (default 100)', string({ pattern: '^\\d+$' })),
        ],
        responses: {
          200: {
            ...response({
              description: 'The page',
              schema: success(ref('Statement')),
              headers: { 'X-Next-After-Revision': { description: 'The cursor of the next page', schema: { type: 'string', pattern: '^\\d+$' } } },
            }),
            content: { 'application/json': { schema: success(ref('Statement')) }, 'text/csv': { schema: { type: 'string' } } },
          },
          ...refusals({ 404: { codes: ['WALLET_NOT_FOUND'], description: 'no wallet for this merchant' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.statementExport)]: {
      get: operation({
        summary: 'The whole statement as one streamed file',
        description: 'JSON without the envelope, or CSV, as an attachment.',
        roles: ['auditor'],
        parameters: [merchantId, ...statementFilters],
        responses: {
          200: {
            ...response({ description: 'The statement', schema: ref('Statement') }),
            content: { 'application/json': { schema: ref('Statement') }, 'text/csv': { schema: { type: 'string' } } },
          },
          ...refusals({ 404: { codes: ['WALLET_NOT_FOUND'], description: 'no wallet for this merchant' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.chain)]: {
      get: operation({
        summary: "The wallet's hash chain, checked link by link in the event store",
        roles: ['auditor'],
        parameters: [merchantId],
        responses: {
          200: ok(
            'The check',
            closed({
              merchant_id: string(),
              intact: boolean,
              events_checked: integer(),
              last_revision: nullable(integer()),
              last_hash: nullable(string({ pattern: '^[0-9a-f]{64}$' })),
              first_break: nullable(closed({ revision: integer(), problem: string() })),
            }),
          ),
          ...refusals({ 404: { codes: ['WALLET_NOT_FOUND'], description: 'no wallet for this merchant' } }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.balanceAsOf)]: {
      get: operation({
        summary: 'The balance now, or as of an instant or a global position',
        roles: ['auditor'],
        parameters: [
          merchantId,
          query('at', 'An ISO 8601 time with an offset', string()),
          query(
            'position',
            'A global position, commit/prepare, each an integer from 0 to 9223372036854775807; not with at',
            string({ pattern: '^\\d{1,19}/\\d{1,19}$' }),
          ),
          query('replay', 'snapshots (the default) or full', { enum: ['snapshots', 'full'] }),
        ],
        responses: {
          200: ok(
            'The balance',
            closed({
              merchant_id: string(),
              as_of: closed({ at: nullable(string()), position: nullable(string()) }),
              balance: money,
              frozen_balance: money,
              available_balance: money,
              events_applied: integer(),
              last_revision: nullable(integer()),
              last_position: nullable(position),
              from_snapshot: nullable(closed({ revision: integer(), position })),
            }),
          ),
          ...refusals({ 404: { codes: ['WALLET_NOT_FOUND'], description: 'no wallet for this merchant' } }),
        },
      }),
    },
  };
}

/** The log replayed and compared with the read models. */
export function verificationPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.verify)]: {
      post: operation({
        summary: 'Replay the log and compare it with the read models',
        description: 'Read-only. Without merchant_id, the whole log; scope "wallet" checks one wallet alone, "merchant" (the default) its orders too.',
        roles: ['auditor'],
        responses: {
          200: ok(
            'The report',
            closed({
              clean: boolean,
              merchant_id: nullable(string()),
              events_checked: integer(),
              last_position: position,
              projection_positions: closed({ orders: position, wallets: position }),
              differences: array(open({ table: string(), key: anyObject, column: nullable(string()), explained_by: nullable(anyObject) })),
              differences_total: integer(),
            }),
          ),
          ...refusals({ 404: { codes: ['WALLET_NOT_FOUND'], description: 'no wallet for this merchant' } }, { body: true }),
        },
      }),
    },
  };
}

/** The read models rebuilt online, and a rebuild's progress. */
export function rebuildPaths(): PathItems {
  return {
    [documentedPath(BACK_OFFICE_ROUTES.rebuild)]: {
      post: operation({
        summary: 'Rebuild the read models online',
        description:
          'One projection, or all of them one after the other; the service keeps answering from the live tables until the rebuilt ones are swapped in.',
        roles: ['admin'],
        responses: {
          202: ok('Started', closed({ rebuild_id: string(), status: { const: 'running' } }), ['ACCEPTED']),
          ...refusals({ 409: { codes: ['REBUILD_RUNNING'], description: 'Another rebuild is running' } }, { body: true }),
        },
      }),
    },
    [documentedPath(BACK_OFFICE_ROUTES.rebuildRun)]: {
      get: operation({
        summary: "A rebuild's progress",
        roles: ['admin'],
        parameters: [pathId('rebuild_id', 'The rebuild')],
        responses: { 200: ok('The rebuild', ref('Rebuild')), ...refusals({ 404: { codes: ['REBUILD_NOT_FOUND'], description: 'no such rebuild' } }) },
      }),
    },
  };
}
