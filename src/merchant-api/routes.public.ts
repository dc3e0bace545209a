/**
 * The merchant API's routes, written once: the controllers mount them, the
 * gateway refuses anything else, and the OpenAPI document describes them.
 */
export const V2_ROUTES = {
  products: '/api/v2/products',
  submit: '/api/v2/topup/submit',
  query: '/api/v2/topup/query',
  balance: '/api/v2/balance',
  verifySignature: '/api/v2/tools/verify-signature',
} as const;

export const V2_PATHS: ReadonlySet<string> = new Set(Object.values(V2_ROUTES));
