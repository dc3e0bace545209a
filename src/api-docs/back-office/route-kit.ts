import { array, closed, failures, identifier, money, nullable, ref, response, Schema, string, success } from '../schema-kit';

/**
 * What every area of the back office document builds its routes with: an
 * operation with its roles, its refusals (the common ones plus its own), a
 * list's page and parameters.
 */

/** Path items of the document, keyed by documented path. */
export type PathItems = Record<string, Record<string, unknown>>;

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
export function refusals(own: Record<number, FailureSpec>, { body = false }: { body?: boolean } = {}) {
  const merged: Record<number, FailureSpec> = {
    ...COMMON,
    400: { codes: ['BAD_REQUEST', 'MALFORMED_HTTP'], description: 'A path that cannot be decoded, or bytes that are not HTTP' },
    404: { codes: ['NOT_FOUND'], description: 'No such route' },
    422: {
      codes: ['VALIDATION_FAILED'],
      description:
        'A bad path id or query parameter: one the route does not take, given twice, empty, as an array or object (`limit[]=`), not UTF-8, with a control character, out of range or in a wrong format (`field` names it)',
    },
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
export const listOf = (key: string, item: Schema) => closed({ [key]: array(item), next_cursor: nullable(string()) });
export const listParameters = (filters: [string, string, Schema][]) => [
  ...filters.map(([name, description, schema]) => query(name, description, schema)),
  query('limit', 'Entries per page, 1-200 (default 50)', string({ pattern: '^\\d+$' })),
  query('cursor', 'next_cursor of the previous page', string()),
];

export const pathId = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: identifier });
export const query = (name: string, description: string, schema: Schema) => ({ name, in: 'query', required: false, description, schema });

interface Operation {
  summary: string;
  description?: string;
  roles: string[];
  parameters?: unknown[];
  responses: Record<string, unknown>;
}

/** An operation of the back office; its request body, if it takes one, comes from the DTO its route validates it with (api-documents.ts). */
export function operation({ summary, description, roles, parameters, responses }: Operation) {
  return {
    summary,
    description: [description, `Roles: ${roles.join(', ')} (admin may call every route).`].filter(Boolean).join(' '),
    tags: [roles.includes('auditor') || roles.includes('reconciler') ? 'Reconciliation and audit' : 'Provisioning'],
    security: [{ StaffToken: [] }],
    ...(parameters ? { parameters } : {}),
    responses,
  };
}

export const ok = (description: string, data: Schema, codes?: string[]) => response({ description, schema: success(data, codes) });
/** A name beside the id it names: what people read, the id being what the service keeps. */
export const nameOf = (what: string) => nullable(string({ description: `The name of ${what}; null only for an id that names no one` }));
export const staffName = (field: string) => nameOf(`the staff member in \`${field}\``);
export const merchantName = nameOf('the merchant in `merchant_id`');

export const merchantId = pathId('merchant_id', 'The merchant, `mch_` and 16 hex characters');
export const orderNo = pathId('order_no', 'The order number');

/** A wallet's amounts right after a movement: a deposit's reply, an adjustment's. */
export const wallet = closed({ merchant_id: string(), currency: string(), balance: money, frozen_balance: money, available_balance: money });

/** The 202 a movement answers when the four-eyes rule turns it into a request (APPROVAL_THRESHOLD). */
export const approvalRequired = ok('The movement waits for a second person (APPROVAL_THRESHOLD): the request; nothing has moved', ref('Approval'), [
  'APPROVAL_REQUIRED',
]);
