import { V2_ROUTES } from '../merchant-api/routes.public';
import {
  array,
  boolean,
  closed,
  failures,
  identifier,
  money,
  nullable,
  ref,
  requestIdHeader,
  response,
  Schema,
  string,
  stringMap,
  success,
  timestamp,
} from './schema-kit';

/** Refusals every signed endpoint can give, by status, in the order they are checked (docs/merchant-api.md). */
const SIGNED_FAILURES = {
  400: {
    codes: ['QUERY_NOT_ALLOWED', 'INVALID_JSON', 'MALFORMED_HTTP'],
    description: 'A query string, a body that is not a JSON object, or bytes that are not HTTP',
  },
  401: {
    codes: ['MISSING_AUTH_HEADER', 'INVALID_API_KEY', 'TIMESTAMP_EXPIRED', 'INVALID_NONCE', 'INVALID_SIGNATURE', 'NONCE_REUSED'],
    description: 'Authentication failed (checked in this order); `field` names a missing header',
  },
  403: { codes: ['MERCHANT_SUSPENDED', 'IP_NOT_ALLOWED'], description: 'The merchant is suspended, or the source address is not on its whitelist' },
  404: { codes: ['NOT_FOUND'], description: 'Unknown route, and every /api/v1 route' },
  405: { codes: ['METHOD_NOT_ALLOWED'], description: 'Any method other than POST on a v2 route', headers: { Allow: { schema: { const: 'POST' } } } },
  408: { codes: ['REQUEST_TIMEOUT'], description: 'The request did not arrive in full in time; nothing was done' },
  413: { codes: ['PAYLOAD_TOO_LARGE'], description: 'The body is over 64 KiB' },
  429: {
    codes: ['RATE_LIMITED'],
    description: "Over the merchant's rate limit",
    headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'string', pattern: '^\\d+$' } } },
  },
  431: { codes: ['HEADERS_TOO_LARGE'], description: 'The request line and headers are over 16 KiB' },
  500: { codes: ['INTERNAL_ERROR'], description: 'Anything unexpected: nothing visible happened, and the same request may be retried unchanged' },
} as const;

/** The body checks of row 8 and the business refusals of row 9, per endpoint. */
function signedFailures(extra: Record<number, { codes: readonly string[]; description: string; headers?: Record<string, unknown> }> = {}) {
  const merged: Record<number, { codes: readonly string[]; description: string; headers?: Record<string, unknown> }> = { ...SIGNED_FAILURES };
  for (const [status, spec] of Object.entries(extra)) {
    const base = merged[Number(status)];
    merged[Number(status)] = base ? { ...base, codes: [...base.codes, ...spec.codes], description: `${base.description}; ${spec.description}` } : spec;
  }
  return failures(merged);
}

const FIELD_FAILURES = {
  400: { codes: ['MISSING_REQUIRED_FIELD'], description: 'a required field is missing or null (`field` names it)' },
  422: {
    codes: ['VALIDATION_FAILED'],
    description:
      'A field has the wrong type or format, or is unknown (`field` names it; a wrong value inside account_fields by its dotted path, e.g. `account_fields.server_id`)',
  },
};

const order: Schema = closed({
  order_no: string({ pattern: '^T[0-9A-Z]{26}$' }),
  out_trade_no: identifier,
  status: { enum: ['processing', 'success', 'failed'] },
  sku_id: string(),
  amount: money,
  currency: string({ pattern: '^[A-Z]{3}$' }),
  account_id: string({ minLength: 1, maxLength: 64 }),
  account_fields: stringMap,
  fail_code: nullable({ enum: ['INVALID_ACCOUNT', 'UPSTREAM_REJECTED', 'SKU_UNAVAILABLE', 'UPSTREAM_UNAVAILABLE', 'RESOLVED_FAILED'] }),
  fail_reason: nullable(string()),
  created_at: timestamp,
  completed_at: nullable(timestamp),
});

/** A signed endpoint; its request body comes from the DTO its route validates it with (api-documents.ts). */
function signedPost(tag: string, summary: string, description: string, responses: Record<string, unknown>) {
  return {
    post: {
      summary,
      description,
      tags: [tag],
      security: [{ ApiKey: [], Timestamp: [], Nonce: [], Signature: [] }],
      responses,
    },
  };
}

/** The merchant API v2 as an OpenAPI 3.1 document; test/api-docs keeps it true to the running service. */
export function merchantApiDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Merchant top-up API',
      version: '2',
      description:
        'Signed JSON over HTTP. Every endpoint is POST with a JSON object body, signed with HMAC-SHA256 over ' +
        '`timestamp\\nnonce\\npath\\nbody` (docs/signing.md). The body is parsed as JSON whatever the Content-Type says. ' +
        'Errors are checked in a fixed order (docs/merchant-api.md).',
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [
      { name: 'Orders', description: 'Submit a top-up and read it back' },
      { name: 'Catalogue and wallet', description: 'What this merchant can order, at its prices, and its balance' },
      { name: 'Signing', description: 'Check what the service signs, while writing your signing code' },
    ],
    paths: {
      [V2_ROUTES.products]: signedPost(
        'Catalogue and wallet',
        'The products and SKUs this merchant can order',
        "SKUs on shelf that have a price for this merchant, with the merchant's own prices.",
        {
          200: response({ description: 'The catalogue', schema: success(ref('Catalogue')) }),
          ...signedFailures({ 422: FIELD_FAILURES[422] }),
        },
      ),
      [V2_ROUTES.submit]: signedPost(
        'Orders',
        'Submit a top-up order',
        "Freezes the merchant's price for the SKU on its wallet and queues fulfilment. The same out_trade_no with the same target " +
          'returns the existing order (200 DUPLICATE); a refused submit created no order and may be sent again.',
        {
          202: response({ description: 'ACCEPTED: a new order, its amount frozen', schema: success(ref('Order'), ['ACCEPTED']) }),
          200: response({
            description: 'DUPLICATE: the existing order with this out_trade_no and the same target',
            schema: success(ref('Order'), ['DUPLICATE']),
          }),
          ...signedFailures({
            400: {
              codes: ['MISSING_REQUIRED_FIELD', 'INVALID_ACCOUNT_FIELD', 'ROUTE_UNAVAILABLE'],
              description: 'a required field is missing, an account field the SKU does not define, or no upstream route for the SKU',
            },
            402: { codes: ['INSUFFICIENT_BALANCE'], description: 'The available balance is lower than the price; no order was created' },
            503: {
              codes: ['SERVICE_BUSY'],
              description:
                "Orders wait for fulfilment beyond the service's limits (the backlog policy): no order was created, nothing was frozen, and the nonce " +
                'was given back; send the same request again after Retry-After seconds',
              headers: { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'string', pattern: '^\\d+$' } } },
            },
            409: { codes: ['OUT_TRADE_NO_CONFLICT'], description: 'The out_trade_no was used for a different target' },
            422: {
              codes: ['VALIDATION_FAILED', 'SKU_NOT_FOUND', 'SKU_OFF_SHELF'],
              description: 'A field has the wrong type or format; no such SKU; off shelf or no price for this merchant',
            },
          }),
        },
      ),
      [V2_ROUTES.query]: signedPost(
        'Orders',
        'Read an order',
        'By order_no, out_trade_no, or both (then they must name the same order). Reads the service only; safe to poll. ' +
          'A query straight after a 202 finds the order.',
        {
          200: response({ description: 'The order', schema: success(ref('Order')) }),
          ...signedFailures({
            ...FIELD_FAILURES,
            404: { codes: ['ORDER_NOT_FOUND'], description: "no such order of this merchant (another merchant's order too)" },
          }),
        },
      ),
      [V2_ROUTES.balance]: signedPost('Catalogue and wallet', 'The wallet', 'Balance, frozen and available amounts, including the latest submits.', {
        200: response({ description: 'The wallet', schema: success(ref('Balance')) }),
        ...signedFailures({ 422: FIELD_FAILURES[422] }),
      }),
      [V2_ROUTES.verifySignature]: {
        post: {
          summary: 'Debug a signature',
          tags: ['Signing'],
          description:
            'Needs a known X-Api-Key only. Does not enforce the timestamp, signature or nonce, consumes no nonce, ' +
            'and never returns the expected signature: compare string_to_sign_lines with what your code signed.',
          security: [{ ApiKey: [] }],
          requestBody: { required: false, content: { 'application/json': { schema: {} } } },
          responses: {
            200: response({ description: 'What the service would sign', schema: success(ref('SignatureCheck')) }),
            ...failures({
              ...SIGNED_FAILURES,
              400: { codes: ['QUERY_NOT_ALLOWED', 'MALFORMED_HTTP'], description: 'A query string, or bytes that are not HTTP' },
              401: { codes: ['MISSING_AUTH_HEADER', 'INVALID_API_KEY'], description: 'No X-Api-Key, or an unknown one' },
            }),
          },
        },
      },
    },
    components: {
      schemas: {
        Order: order,
        Catalogue: closed({
          products: array(
            closed({
              product_id: string(),
              name: string(),
              skus: array(
                closed({
                  sku_id: string(),
                  name: string(),
                  price: money,
                  currency: string({ pattern: '^[A-Z]{3}$' }),
                  required_account_fields: array(string()),
                  supports_account_check: boolean,
                }),
              ),
            }),
          ),
        }),
        Balance: closed({ currency: string({ pattern: '^[A-Z]{3}$' }), balance: money, frozen_balance: money, available_balance: money }),
        SignatureCheck: closed({
          string_to_sign_lines: array(string(), { minItems: 4, maxItems: 4 }),
          string_to_sign: string(),
          signature_matches: boolean,
          timestamp_within_tolerance: boolean,
        }),
      },
      headers: { 'X-Request-Id': requestIdHeader },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: "The merchant's API key" },
        Timestamp: { type: 'apiKey', in: 'header', name: 'X-Timestamp', description: 'Unix seconds, within 300 s of the service clock' },
        Nonce: { type: 'apiKey', in: 'header', name: 'X-Nonce', description: '1-128 printable ASCII characters, once per merchant' },
        Signature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Signature',
          description: 'Hex HMAC-SHA256 with the app secret over timestamp, nonce, path and raw body, joined by \\n',
        },
      },
    },
  };
}
