/**
 * A small client for merchant API v2 (spec §4-§7, contract §1).
 *
 * Depends only on node built-ins and the global fetch of Node 20, so a merchant
 * can copy this folder (merchant-client.ts, signing.ts, index.ts) into its own
 * code base. Usage: docs/merchant-client.md.
 *
 * It never throws for an HTTP error status, only for network errors: the
 * service answers every failure with a machine-readable `code`, and callers
 * branch on that code.
 */
import { newNonce, sign } from './signing';

/** Money crosses the API as a string with exactly two fraction digits ("12.50"); never turn it into a float. */
export type Money = string;

/** ISO 8601 with a numeric UTC offset, e.g. "2026-11-22T10:04:05.123+00:00". */
export type Timestamp = string;

export type OrderStatus = 'processing' | 'success' | 'failed';

export interface Order {
  order_no: string;
  out_trade_no: string;
  /** `processing` means wait, never failure. `success` and `failed` are final. */
  status: OrderStatus;
  sku_id: string;
  amount: Money;
  currency: string;
  account_id: string;
  account_fields: Record<string, string>;
  /** Set when `failed`: INVALID_ACCOUNT, UPSTREAM_REJECTED, SKU_UNAVAILABLE, RESOLVED_FAILED, ... */
  fail_code: string | null;
  fail_reason: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface Sku {
  sku_id: string;
  name: string;
  /** The merchant's own price. */
  price: Money;
  currency: string;
  /** Names of the `account_fields` an order for this SKU must carry, e.g. ["server_id"]. */
  required_account_fields: string[];
  /** Informational only: there is no pre-order account check endpoint in v2. */
  supports_account_check: boolean;
}

export interface Product {
  product_id: string;
  name: string;
  skus: Sku[];
}

export interface ProductList {
  products: Product[];
}

export interface Balance {
  currency: string;
  balance: Money;
  frozen_balance: Money;
  available_balance: Money;
}

export interface VerifySignatureResult {
  /** [timestamp, nonce, path, body] as the service read them. */
  string_to_sign_lines: [string, string, string, string];
  string_to_sign: string;
  signature_matches: boolean;
  timestamp_within_tolerance: boolean;
}

/** The body of an order callback (spec §6, contract §2). */
export interface CallbackPayload {
  order_no: string;
  out_trade_no: string;
  status: 'success' | 'failed';
  amount: Money;
  account_id: string;
  fail_code: string | null;
  fail_reason: string | null;
  completed_at: Timestamp;
}

export type ApiResponse<T> =
  { success: true; code: 'OK' | 'ACCEPTED' | 'DUPLICATE'; data: T } | { success: false; code: string; message: string; field?: string };

export interface ApiResult<T> {
  status: number;
  body: ApiResponse<T>;
  headers: Headers;
}

export interface SubmitInput {
  /** Your idempotency key: 1-64 of A-Z a-z 0-9 - _ . : ; retry a failed submit with the same one. */
  out_trade_no: string;
  sku_id: string;
  account_id: string;
  /** Every field the SKU's `required_account_fields` names; `{}` when it names none. */
  account_fields: Record<string, string>;
}

/** One identifier or both (both must name the same order, else 404). */
export type QueryInput = { order_no: string; out_trade_no?: string } | { order_no?: string; out_trade_no: string };

export interface RequestOptions {
  /** Unix seconds; default: the client's clock. Set it only to reproduce a request. */
  timestamp?: string | number;
  /** Default: 16 random bytes in hex. A nonce is accepted once. */
  nonce?: string;
  /** Extra headers, applied last, so they can override the signed ones (useful only for debugging). */
  headers?: Record<string, string>;
}

export interface MerchantClientOptions {
  /** Origin of the service, e.g. "https://topup.example.com"; paths are appended as they are signed. */
  baseUrl: string;
  apiKey: string;
  appSecret: string;
  fetch?: typeof fetch;
  /** Milliseconds since the epoch; default Date.now. */
  clock?: () => number;
}

/**
 * The code a client-side result carries when the reply was not the service's
 * JSON envelope (a proxy's HTML error page, for example). Never sent by the service.
 */
export const UNEXPECTED_RESPONSE = 'UNEXPECTED_RESPONSE';

export class MerchantClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly appSecret: string;
  private readonly fetch: typeof fetch;
  private readonly clock: () => number;

  constructor(options: MerchantClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.appSecret = options.appSecret;
    // Looked up at call time by default, so a fetch replaced after construction is honoured.
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.clock = options.clock ?? Date.now;
  }

  products(): Promise<ApiResult<ProductList>> {
    return this.request('/api/v2/products', {});
  }

  /** 202 ACCEPTED: funds frozen, not delivered. 200 DUPLICATE: the existing order for this out_trade_no. */
  submit(input: SubmitInput): Promise<ApiResult<Order>> {
    return this.request('/api/v2/topup/submit', input);
  }

  /** Reads only the service's records, so polling is safe. */
  query(input: QueryInput): Promise<ApiResult<Order>> {
    return this.request('/api/v2/topup/query', input);
  }

  balance(): Promise<ApiResult<Balance>> {
    return this.request('/api/v2/balance', {});
  }

  /** Shows how the service reads a signed request; consumes no nonce. Pass the body you are trying to get right. */
  verifySignature(body: unknown = {}, options?: RequestOptions): Promise<ApiResult<VerifySignatureResult>> {
    return this.request('/api/v2/tools/verify-signature', body, options);
  }

  /**
   * Signs and POSTs one request. A string or Buffer body is sent as is; anything
   * else is JSON.stringify'd once. Either way the bytes signed are the bytes sent.
   */
  async request<T = unknown>(path: string, body: unknown = {}, options: RequestOptions = {}): Promise<ApiResult<T>> {
    if (!path.startsWith('/')) throw new TypeError(`path must start with "/": ${path}`);
    const bytes = toBytes(body);
    const timestamp = String(options.timestamp ?? Math.floor(this.clock() / 1000));
    const nonce = options.nonce ?? newNonce();

    const headers = new Headers({
      'Content-Type': 'application/json',
      'X-Api-Key': this.apiKey,
      'X-Timestamp': timestamp,
      'X-Nonce': nonce,
      'X-Signature': sign(this.appSecret, timestamp, nonce, path, bytes),
    });
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);

    // A plain Uint8Array copy: a Buffer is not a BodyInit under the DOM typings some merchants compile with.
    const response = await this.fetch(this.baseUrl + path, { method: 'POST', headers, body: new Uint8Array(bytes) });
    const text = await response.text();
    return { status: response.status, body: parseEnvelope<T>(response.status, text), headers: response.headers };
  }
}

function toBytes(body: unknown): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError('body cannot be serialised as JSON');
  return Buffer.from(json, 'utf8');
}

function parseEnvelope<T>(status: number, text: string): ApiResponse<T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (isEnvelope(parsed)) return parsed as ApiResponse<T>;
  return { success: false, code: UNEXPECTED_RESPONSE, message: `HTTP ${status}: ${text.slice(0, 200)}` };
}

function isEnvelope(value: unknown): value is { success: boolean; code: string } {
  if (typeof value !== 'object' || value === null) return false;
  const { success, code } = value as Record<string, unknown>;
  return typeof success === 'boolean' && typeof code === 'string';
}
