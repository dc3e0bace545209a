import { BACK_OFFICE_ROUTES, documentedPath } from '../back-office/routes.public';
import {
  anyObject,
  array,
  boolean,
  closed,
  failures,
  identifier,
  integer,
  money,
  nullable,
  open,
  position,
  ref,
  requestIdHeader,
  response,
  Schema,
  string,
  stringMap,
  success,
  timestamp,
} from './schema-kit';

/** What every back-office route can refuse (docs/back-office-api.md, "Order of checks"). */
const COMMON = {
  401: { codes: ['UNAUTHORIZED'], description: 'No, malformed or unknown bearer token', headers: { 'WWW-Authenticate': { schema: { const: 'Bearer' } } } },
  403: {
    codes: ['FORBIDDEN', 'CSRF_TOKEN_INVALID'],
    description: "The staff member's role may not call the route; or a change made with a console session cookie without its X-CSRF-Token",
  },
  408: { codes: ['REQUEST_TIMEOUT'], description: 'The request did not arrive in full in time; nothing was done' },
  431: { codes: ['HEADERS_TOO_LARGE'], description: 'The request line and headers are over 16 KiB' },
  500: { codes: ['INTERNAL_ERROR'], description: 'Something unexpected; the same request may be retried unchanged' },
} as const;

type FailureSpec = { codes: readonly string[]; description: string; headers?: Record<string, unknown> };

/** The common refusals plus a route's own; codes of one status are merged. */
function refusals(own: Record<number, FailureSpec>, { body = false }: { body?: boolean } = {}) {
  const merged: Record<number, FailureSpec> = {
    ...COMMON,
    400: { codes: ['BAD_REQUEST', 'MALFORMED_HTTP'], description: 'A path that cannot be decoded, or bytes that are not HTTP' },
    404: { codes: ['NOT_FOUND'], description: 'No such route' },
    422: { codes: ['VALIDATION_FAILED'], description: 'A bad path id or query parameter (`field` names it)' },
  };
  if (body) {
    merged[400] = { ...merged[400], codes: [...merged[400].codes, 'INVALID_JSON', 'MISSING_REQUIRED_FIELD'] };
    merged[413] = { codes: ['PAYLOAD_TOO_LARGE'], description: 'The body is over 64 KiB' };
  }
  for (const [status, spec] of Object.entries(own)) {
    const base = merged[Number(status)];
    merged[Number(status)] = base
      ? { ...base, codes: [...new Set([...base.codes, ...spec.codes])], description: `${base.description}; ${spec.description}` }
      : spec;
  }
  return failures(merged);
}

/** A page of a list, newest or id first, with the cursor of the next page (null on the last). */
const listOf = (key: string, item: Schema) => closed({ [key]: array(item), next_cursor: nullable(string()) });
const listParameters = (filters: [string, string, Schema][]) => [
  ...filters.map(([name, description, schema]) => query(name, description, schema)),
  query('limit', 'Entries per page, 1-200 (default 50)', string({ pattern: '^\\d+$' })),
  query('cursor', 'next_cursor of the previous page', string()),
];

const pathId = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: identifier });
const query = (name: string, description: string, schema: Schema) => ({ name, in: 'query', required: false, description, schema });

interface Operation {
  summary: string;
  description?: string;
  roles: string[];
  parameters?: unknown[];
  body?: Schema;
  /** A body may be left out (read as {}). */
  bodyOptional?: boolean;
  responses: Record<string, unknown>;
}

function operation({ summary, description, roles, parameters, body, bodyOptional, responses }: Operation) {
  return {
    summary,
    description: [description, `Roles: ${roles.join(', ')} (admin may call every route).`].filter(Boolean).join(' '),
    tags: [roles.includes('auditor') || roles.includes('reconciler') ? 'Reconciliation and audit' : 'Provisioning'],
    security: [{ StaffToken: [] }],
    ...(parameters ? { parameters } : {}),
    ...(body ? { requestBody: { required: !bodyOptional, content: { 'application/json': { schema: body } } } } : {}),
    responses,
  };
}

const ok = (description: string, data: Schema, codes?: string[]) => response({ description, schema: success(data, codes) });
const displayName = string({ minLength: 1, maxLength: 128 });
const ipWhitelist = array(string(), { maxItems: 100 });
const rateLimit = integer({ minimum: 1, maximum: 100_000 });
const callbackUrl = nullable(string({ maxLength: 2048, format: 'uri' }));

const merchantId = pathId('merchant_id', 'The merchant, `mch_` and 16 hex characters');
const orderNo = pathId('order_no', 'The order number');

const merchant: Schema = closed(
  {
    merchant_id: string({ pattern: '^mch_[0-9a-f]{16}$' }),
    name: string(),
    currency: string({ pattern: '^[A-Z]{3}$' }),
    api_key: string({ pattern: '^ak_[0-9a-f]{32}$' }),
    callback_url: nullable(string()),
    ip_whitelist: array(string()),
    status: { enum: ['active', 'suspended'] },
    rate_limit_per_second: integer(),
    previous_secret_valid_until: nullable(timestamp),
    created_at: timestamp,
    created_by: string(),
    updated_at: timestamp,
    updated_by: string(),
    app_secret: string({ pattern: '^[0-9a-f]{64}$', description: 'Only in the replies to creation and rotation' }),
  },
  ['app_secret'],
);

const staffMember: Schema = closed(
  {
    staff_id: string({ pattern: '^stf_[0-9a-f]{16}$' }),
    name: string(),
    role: { enum: ['admin', 'reconciler', 'auditor'] },
    status: { enum: ['active', 'disabled'] },
    created_at: timestamp,
    created_by: string(),
    disabled_at: nullable(timestamp),
    disabled_by: nullable(string()),
    token_rotated_at: nullable(timestamp),
    token: string({ description: 'Only in the reply to a token rotation' }),
  },
  ['token'],
);

const sku: Schema = closed({
  sku_id: string(),
  product_id: string(),
  name: string(),
  required_account_fields: array(string()),
  supports_account_check: boolean,
  on_shelf: boolean,
  route: nullable(string()),
});

const wallet = closed({ merchant_id: string(), currency: string(), balance: money, frozen_balance: money, available_balance: money });

const orderDetail: Schema = closed({
  order_no: string(),
  merchant_id: string(),
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
  resolution: nullable(closed({ outcome: { enum: ['success', 'failed'] }, resolved_by: string(), resolved_at: string(), note: string() })),
  history: array(closed({ revision: integer(), position, type: string(), recorded_at: timestamp, data: anyObject })),
});

const callbackLog: Schema = closed({
  order_no: string(),
  state: { enum: ['pending', 'acknowledged', 'exhausted'] },
  attempts_made: integer(),
  next_attempt_at: nullable(timestamp),
  attempts: array(
    closed({
      attempt: integer({ minimum: 1 }),
      kind: { enum: ['scheduled', 'manual'] },
      at: timestamp,
      url: nullable(string()),
      in_progress: boolean,
      status_code: nullable(integer()),
      latency_ms: nullable(integer()),
      reply_excerpt: nullable(string()),
      acknowledged: boolean,
      error: nullable(string()),
    }),
  ),
});

const statementLine: Schema = closed({
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

const statement: Schema = closed({
  merchant_id: string(),
  currency: string(),
  lines: array(ref('StatementLine')),
  next_after_revision: nullable(integer()),
});

const rebuild: Schema = closed(
  {
    rebuild_id: string({ pattern: '^rb_[0-9a-f]{16}$' }),
    status: { enum: ['running', 'done', 'failed'] },
    requested_by: string(),
    started_at: timestamp,
    finished_at: nullable(timestamp),
    projections: array(closed({ name: string(), events: integer(), position: nullable(position) })),
    error: string(),
  },
  ['error'],
);

const checkResult = closed({ ok: boolean, ms: integer(), error: string(), detail: anyObject }, ['error', 'detail']);
const readinessChecks = closed({ postgres: checkResult, event_store: checkResult, migrations: checkResult, projections: checkResult, wallets: checkResult });

const statementFilters = [
  query('from', 'Lines recorded at or after this ISO 8601 time (with an offset)', string()),
  query('to', 'Lines recorded before this ISO 8601 time (with an offset)', string()),
  query('format', 'json (default) or csv', { enum: ['json', 'csv'] }),
];

/** The back office (and the operators' probes) as an OpenAPI 3.1 document; test/api-docs keeps it true to the running service. */
export function backOfficeDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Top-up back office',
      version: '1',
      description:
        "Staff routes under /admin/v1 with a bearer token (ADMIN_TOKEN or a staff token), and the operators' probes. " +
        'Bodies are JSON objects of at most 64 KiB, parsed as JSON whatever the Content-Type says. See docs/back-office-api.md.',
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [
      { name: 'Provisioning', description: 'Staff, merchants, deposits, catalogue and prices' },
      { name: 'Reconciliation and audit', description: 'Unknown-result orders, callbacks, statements, verification, rebuilds' },
      { name: 'Operations', description: 'Health probes, metrics and these documents: no staff token' },
    ],
    paths: {
      [documentedPath(BACK_OFFICE_ROUTES.staff)]: {
        get: operation({
          summary: 'List staff members, newest first (never a token)',
          roles: ['admin'],
          parameters: listParameters([
            ['role', 'admin, reconciler or auditor', { enum: ['admin', 'reconciler', 'auditor'] }],
            ['status', 'active or disabled', { enum: ['active', 'disabled'] }],
          ]),
          responses: { 200: ok('A page of staff members', listOf('staff', ref('StaffMember'))), ...refusals({}) },
        }),
        post: operation({
          summary: 'Create a staff member',
          description: 'The token is shown only in this reply.',
          roles: ['admin'],
          body: closed({ name: displayName, role: { enum: ['admin', 'reconciler', 'auditor'] } }),
          responses: {
            201: ok(
              'The staff member and its token',
              closed({ staff_id: string({ pattern: '^stf_[0-9a-f]{16}$' }), name: string(), role: string(), token: string() }),
            ),
            ...refusals({}, { body: true }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.staffToken)]: {
        post: operation({
          summary: 'Give a staff member a new token',
          description: 'The new token is in this reply only; the old one stops working from the next request.',
          roles: ['admin'],
          parameters: [pathId('staff_id', 'The staff member, `stf_` and 16 hex characters')],
          responses: {
            200: ok('The member with its new token', ref('StaffMember')),
            ...refusals({
              404: { codes: ['STAFF_NOT_FOUND'], description: 'no such staff member' },
              409: { codes: ['STAFF_DISABLED'], description: 'The member is disabled' },
            }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.staffDisable)]: {
        post: operation({
          summary: 'Disable a staff member',
          description: 'The token stops working from the next request; disabling twice changes nothing more.',
          roles: ['admin'],
          parameters: [pathId('staff_id', 'The staff member, `stf_` and 16 hex characters')],
          responses: {
            200: ok('The member, disabled', ref('StaffMember')),
            ...refusals({
              404: { codes: ['STAFF_NOT_FOUND'], description: 'no such staff member' },
              409: { codes: ['CANNOT_DISABLE_SELF'], description: 'Nobody can disable themselves' },
            }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.merchants)]: {
        get: operation({
          summary: 'List merchants, newest first',
          roles: ['admin', 'reconciler', 'auditor'],
          parameters: listParameters([
            ['name', 'A part of the name, any case', string()],
            ['status', 'active or suspended', { enum: ['active', 'suspended'] }],
          ]),
          responses: { 200: ok('A page of merchants', listOf('merchants', ref('Merchant'))), ...refusals({}) },
        }),
        post: operation({
          summary: 'Create a merchant and its wallet',
          description: 'The app secret is shown only in this reply.',
          roles: ['admin'],
          body: closed(
            {
              name: displayName,
              currency: string({ pattern: '^[A-Z]{3}$' }),
              callback_url: callbackUrl,
              ip_whitelist: ipWhitelist,
              rate_limit_per_second: rateLimit,
            },
            ['currency', 'callback_url', 'ip_whitelist', 'rate_limit_per_second'],
          ),
          responses: { 201: ok('The merchant, with its app secret', ref('Merchant')), ...refusals({}, { body: true }) },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.merchant)]: {
        get: operation({
          summary: 'Read a merchant',
          roles: ['reconciler', 'auditor'],
          parameters: [merchantId],
          responses: { 200: ok('The merchant', ref('Merchant')), ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }) },
        }),
        patch: operation({
          summary: 'Change a merchant',
          description: 'Any of callback_url (null removes it), ip_whitelist (replaces the list), status and rate_limit_per_second.',
          roles: ['admin'],
          parameters: [merchantId],
          body: closed({ callback_url: callbackUrl, ip_whitelist: ipWhitelist, status: { enum: ['active', 'suspended'] }, rate_limit_per_second: rateLimit }, [
            'callback_url',
            'ip_whitelist',
            'status',
            'rate_limit_per_second',
          ]),
          responses: {
            200: ok('The merchant as changed', ref('Merchant')),
            ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }, { body: true }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.appSecret)]: {
        post: operation({
          summary: 'Rotate the app secret',
          description: 'The new secret is in this reply only; the replaced one keeps verifying for overlap_seconds.',
          roles: ['admin'],
          parameters: [merchantId],
          body: closed({ overlap_seconds: integer({ minimum: 0, maximum: 2_592_000 }) }),
          responses: {
            200: ok('The merchant with its new app secret', ref('Merchant')),
            ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }, { body: true }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.previousAppSecret)]: {
        delete: operation({
          summary: "End a rotation's overlap early",
          roles: ['admin'],
          parameters: [merchantId],
          responses: { 200: ok('The merchant', ref('Merchant')), ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }) },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.deposits)]: {
        post: operation({
          summary: 'Credit a wallet',
          description: 'The same reference with the same amount again moves no money.',
          roles: ['admin'],
          parameters: [merchantId],
          body: closed({ amount: string({ pattern: '^\\d+(\\.\\d{1,2})?$' }), reference: string({ minLength: 1, maxLength: 128 }) }),
          responses: {
            201: ok('The wallet after the deposit', wallet),
            ...refusals(
              {
                404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' },
                409: { codes: ['DEPOSIT_REFERENCE_CONFLICT'], description: 'The reference was used for another amount' },
              },
              { body: true },
            ),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.products)]: {
        get: operation({
          summary: 'List products, in id order',
          roles: ['admin'],
          parameters: listParameters([['name', 'A part of the name, any case', string()]]),
          responses: { 200: ok('A page of products', listOf('products', closed({ product_id: string(), name: string() }))), ...refusals({}) },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.skus)]: {
        get: operation({
          summary: 'List SKUs, in id order',
          roles: ['admin'],
          parameters: listParameters([
            ['product_id', 'The product', identifier],
            ['on_shelf', 'true or false', { enum: ['true', 'false'] }],
            ['name', 'A part of the name, any case', string()],
          ]),
          responses: { 200: ok('A page of SKUs', listOf('skus', sku)), ...refusals({}) },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.prices)]: {
        get: operation({
          summary: "List a merchant's prices, in SKU order",
          roles: ['admin'],
          parameters: [merchantId, ...listParameters([])],
          responses: {
            200: ok(
              'A page of prices',
              listOf(
                'prices',
                closed({
                  merchant_id: string(),
                  sku_id: string(),
                  price: money,
                  sku_name: string(),
                  on_shelf: boolean,
                  updated_at: timestamp,
                  updated_by: string(),
                }),
              ),
            ),
            ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND'], description: 'no such merchant' } }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.orders)]: {
        get: operation({
          summary: 'Search orders, newest first',
          description: 'Submits the merchant API refused are listed too, with stage "refused", status null and their refusal_code.',
          roles: ['reconciler', 'auditor'],
          parameters: listParameters([
            ['merchant_id', 'Exactly', identifier],
            ['order_no', 'Exactly', string()],
            ['out_trade_no', 'Exactly', string()],
            ['account_id', 'Exactly', string()],
            ['status', 'processing, success or failed', { enum: ['processing', 'success', 'failed'] }],
            ['stage', 'The internal stage', string()],
            ['created_from', 'Created at or after (ISO 8601 with an offset)', string()],
            ['created_to', 'Created before', string()],
            ['completed_from', 'Completed at or after', string()],
            ['completed_to', 'Completed before', string()],
          ]),
          responses: {
            200: ok(
              'A page of orders',
              listOf(
                'orders',
                open({
                  order_no: string(),
                  merchant_id: string(),
                  out_trade_no: string(),
                  status: nullable({ enum: ['processing', 'success', 'failed'] }),
                  stage: string(),
                  sku_id: string(),
                  account_id: string(),
                  amount: money,
                  currency: string(),
                  refusal_code: nullable(string()),
                  fail_code: nullable(string()),
                  created_at: timestamp,
                  completed_at: nullable(timestamp),
                }),
              ),
            ),
            ...refusals({}),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.status)]: {
        get: operation({
          summary: 'Whether the service keeps up: projections, fulfilment, callbacks, reconciliation',
          roles: ['admin'],
          responses: {
            200: ok(
              'The status',
              open({
                at: timestamp,
                projections: array(open({ name: string(), position, events_behind: integer(), events_behind_at_least: boolean })),
                fulfilment: open({ pending: integer(), retrying: integer(), oldest_due_at: nullable(timestamp) }),
                callbacks: open({ pending: integer(), exhausted: integer(), oldest_due_at: nullable(timestamp) }),
                reconciliation: open({ unknown_result_orders: integer(), oldest: nullable(anyObject) }),
              }),
            ),
            ...refusals({}),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.product)]: {
        put: operation({
          summary: 'Create or replace a product',
          roles: ['admin'],
          parameters: [pathId('product_id', 'The product')],
          body: closed({ name: displayName }),
          responses: { 200: ok('The product', closed({ product_id: string(), name: string() })), ...refusals({}, { body: true }) },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.sku)]: {
        put: operation({
          summary: 'Create or replace a SKU',
          roles: ['admin'],
          parameters: [pathId('sku_id', 'The SKU')],
          body: closed(
            {
              product_id: identifier,
              name: displayName,
              required_account_fields: array(string({ pattern: '^[a-z][a-z0-9_]{0,31}$' }), { maxItems: 20, uniqueItems: true }),
              supports_account_check: boolean,
              on_shelf: boolean,
              route: nullable(identifier),
            },
            ['route'],
          ),
          responses: {
            200: ok('The SKU', sku),
            ...refusals({ 404: { codes: ['PRODUCT_NOT_FOUND'], description: 'no such product' } }, { body: true }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.price)]: {
        put: operation({
          summary: "Set a merchant's price for a SKU",
          roles: ['admin'],
          parameters: [merchantId, pathId('sku_id', 'The SKU')],
          body: closed({ price: string({ pattern: '^\\d+(\\.\\d{1,2})?$' }) }),
          responses: {
            200: ok('The price', closed({ merchant_id: string(), sku_id: string(), price: money })),
            ...refusals({ 404: { codes: ['MERCHANT_NOT_FOUND', 'SKU_NOT_FOUND'], description: 'no such merchant, or no such SKU' } }, { body: true }),
          },
        }),
      },
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
          description: 'Who, when and why are recorded as an event; the order then settles or releases like an upstream outcome.',
          roles: ['reconciler'],
          parameters: [orderNo],
          body: closed({ outcome: { enum: ['success', 'failed'] }, note: string({ minLength: 1, maxLength: 1000 }) }),
          responses: {
            200: ok('The order as resolved', ref('OrderDetail')),
            ...refusals(
              {
                404: { codes: ['ORDER_NOT_FOUND'], description: 'no such order' },
                409: {
                  codes: ['ORDER_NOT_IN_RECONCILIATION', 'OUTCOME_ALREADY_DECIDED', 'ORDER_ALREADY_FINAL', 'ORDER_NOT_ACCEPTED', 'RESOLUTION_REQUIRED'],
                  description: 'The order is not waiting for a resolution',
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
      [documentedPath(BACK_OFFICE_ROUTES.orderCallbacks)]: {
        get: operation({
          summary: "An order's callback delivery log",
          roles: ['reconciler'],
          parameters: [orderNo],
          responses: {
            200: ok('Every attempt', ref('CallbackLog')),
            ...refusals({ 404: { codes: ['CALLBACK_NOT_FOUND'], description: 'the order does not exist or is not final yet' } }),
          },
        }),
      },
      [documentedPath(BACK_OFFICE_ROUTES.redeliverCallback)]: {
        post: operation({
          summary: 'Send the callback again now',
          roles: ['reconciler'],
          parameters: [orderNo],
          responses: {
            202: ok('The delivery log, the new attempt due now', ref('CallbackLog')),
            ...refusals({ 404: { codes: ['CALLBACK_NOT_FOUND'], description: 'the order does not exist or is not final yet' } }),
          },
        }),
      },
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
            query('position', 'A global position, commit/prepare', string()),
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
      [documentedPath(BACK_OFFICE_ROUTES.verify)]: {
        post: operation({
          summary: 'Replay the log and compare it with the read models',
          description: 'Read-only. Without merchant_id, the whole log; scope "wallet" checks one wallet alone, "merchant" (the default) its orders too.',
          roles: ['auditor'],
          body: closed({ merchant_id: identifier, scope: { enum: ['wallet', 'merchant'] } }, ['merchant_id', 'scope']),
          bodyOptional: true,
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
      [documentedPath(BACK_OFFICE_ROUTES.rebuild)]: {
        post: operation({
          summary: 'Rebuild the read models online',
          description:
            'One projection, or all of them one after the other; the service keeps answering from the live tables until the rebuilt ones are swapped in.',
          roles: ['admin'],
          body: closed({ projection: string() }, ['projection']),
          bodyOptional: true,
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
      '/health': {
        get: probe("The summary: always 200 while the process serves, with this instance's projection positions", {
          200: response({
            description: 'Serving',
            schema: closed({
              status: { const: 'ok' },
              event_store: { enum: ['postgres', 'esdb'] },
              projections: { type: 'object', additionalProperties: position },
            }),
          }),
        }),
      },
      '/health/live': {
        get: probe('Liveness: the process runs. Never depends on the database, so an outage never gets the process restarted', {
          200: response({ description: 'Alive', schema: success(closed({ status: { const: 'live' }, uptime_s: integer({ minimum: 0 }) })) }),
        }),
      },
      '/health/ready': {
        get: probe(
          'Readiness: Postgres and the event store answer, every migration is applied, every projection is within READY_MAX_LAG_MS of the log, ' +
            'and the wallets loaded at start-up (WALLET_WARMUP) are loaded',
          {
            200: response({ description: 'Ready', schema: success(closed({ status: { const: 'ready' }, checks: readinessChecks })) }),
            503: response({
              description: 'Not ready: `message` names each failed check, `checks` has them all',
              schema: closed({ success: { const: false }, code: { const: 'NOT_READY' }, message: string(), checks: readinessChecks }),
              headers: { 'Retry-After': { schema: { type: 'string' } } },
            }),
          },
        ),
      },
      '/metrics': {
        get: {
          ...probe('Prometheus metrics (text exposition format 0.0.4)', {
            200: response({ description: 'The metrics', contentType: 'text/plain; version=0.0.4; charset=utf-8', schema: { type: 'string' } }),
            401: response({
              description: 'METRICS_TOKEN is set and the bearer token is missing or wrong',
              schema: closed({ success: { const: false }, code: { const: 'UNAUTHORIZED' }, message: string() }),
            }),
            404: response({
              description: 'Served on METRICS_PORT instead, or not at all (production without METRICS_TOKEN or METRICS_PORT)',
              schema: closed({ success: { const: false }, code: { const: 'NOT_FOUND' }, message: string() }),
            }),
          }),
          security: [{}, { MetricsToken: [] }],
        },
      },
      '/docs': {
        get: probe('These documents as a page to read (no scripts, nothing fetched from elsewhere)', {
          200: response({ description: 'The page', contentType: 'text/html', schema: { type: 'string' } }),
        }),
      },
      '/docs/merchant-api.json': {
        get: probe('The merchant API v2 as OpenAPI 3.1', { 200: response({ description: 'The document', schema: { type: 'object', required: ['openapi'] } }) }),
      },
      '/docs/back-office.json': {
        get: probe('This document', { 200: response({ description: 'The document', schema: { type: 'object', required: ['openapi'] } }) }),
      },
    },
    components: {
      schemas: {
        Merchant: merchant,
        StaffMember: staffMember,
        OrderDetail: orderDetail,
        CallbackLog: callbackLog,
        Statement: statement,
        StatementLine: statementLine,
        Rebuild: rebuild,
      },
      headers: { 'X-Request-Id': requestIdHeader },
      securitySchemes: {
        StaffToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'ADMIN_TOKEN, or a staff token from POST /admin/v1/staff. The staff console (/console) uses a session cookie instead, with X-CSRF-Token on changes.',
        },
        MetricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set' },
      },
    },
  };
}

function probe(summary: string, responses: Record<string, unknown>) {
  return { summary, tags: ['Operations'], security: [], responses };
}
