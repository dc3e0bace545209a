// npm run demo: puts a demo merchant on a running service (products, SKUs,
// prices, a deposit) and prints signed curl commands to paste into bash.
//
//   BASE_URL   the service (default http://127.0.0.1:8080)
//   ADMIN_TOKEN  the back office's token (default: the one `npm start` keeps
//              in DATA_DIR/development-secrets.json)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDirectory } from '../src/config/development-secrets';

export interface DemoMerchant {
  merchantId: string;
  apiKey: string;
  appSecret: string;
}

/** The simulator's outcomes by the end of account_id (docs/fulfilment.md, "The built-in simulator"). */
export const DEMO_ACCOUNTS = [
  { accountId: '12345678', outcome: 'delivered after UPSTREAM_SIM_DELAY_MS (200 ms): success and a callback' },
  { accountId: '12345000', outcome: 'ends in 000: refused, failed with INVALID_ACCOUNT' },
  { accountId: '12345001', outcome: 'ends in 001: refused, failed with UPSTREAM_REJECTED' },
  { accountId: '12345503', outcome: 'ends in 503: the upstream is busy twice, then delivers' },
  { accountId: '12345999', outcome: 'ends in 999: never answered; stays processing until reconciliation staff settle it' },
];

/** Provisions the demo through the back office, as an operator would. Safe to run again: each run opens a new merchant. */
export async function provisionDemo(baseUrl: string, adminToken: string, callbackUrl?: string): Promise<DemoMerchant> {
  const admin = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reply = (await response.json().catch(() => ({}))) as { success?: boolean; data?: Record<string, string> };
    if (!response.ok || reply.success === false) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(reply)}`);
    return reply.data ?? {};
  };
  await admin('PUT', '/admin/v1/products/demo-game', { name: 'Demo Game' });
  await admin('PUT', '/admin/v1/skus/demo-gems-100', {
    product_id: 'demo-game',
    name: '100 Gems',
    required_account_fields: ['server_id'],
    supports_account_check: true,
    on_shelf: true,
  });
  await admin('PUT', '/admin/v1/skus/demo-voucher-10', {
    product_id: 'demo-game',
    name: 'Voucher 10',
    required_account_fields: [],
    supports_account_check: false,
    on_shelf: true,
  });
  const merchant = await admin('POST', '/admin/v1/merchants', { name: 'Demo Shop', ...(callbackUrl ? { callback_url: callbackUrl } : {}) });
  const merchantId = merchant.merchant_id;
  await admin('PUT', `/admin/v1/merchants/${merchantId}/prices/demo-gems-100`, { price: '1.20' });
  await admin('PUT', `/admin/v1/merchants/${merchantId}/prices/demo-voucher-10`, { price: '10.00' });
  await admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '100.00', reference: 'demo' });
  return { merchantId, apiKey: merchant.api_key, appSecret: merchant.app_secret };
}

/** A bash snippet that signs and sends one request when pasted (a signature is good for 300 s and one use). */
export function signedCurl(path: string, body: string): string {
  return [
    `req_path='${path}' body='${body}'`,
    `ts=$(date +%s); nonce=$(openssl rand -hex 16)`,
    `sig=$(printf '%s\\n%s\\n%s\\n%s' "$ts" "$nonce" "$req_path" "$body" | openssl dgst -sha256 -hmac "$TOPUP_APP_SECRET" | sed 's/^.* //')`,
    `curl -sS -X POST "$TOPUP_BASE_URL$req_path" -H 'Content-Type: application/json' -H "X-Api-Key: $TOPUP_API_KEY" \\`,
    `  -H "X-Timestamp: $ts" -H "X-Nonce: $nonce" -H "X-Signature: $sig" --data-binary "$body"; echo`,
  ].join('\n');
}

function adminTokenFromEnvironment(): string {
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = join(dataDirectory(), 'development-secrets.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { ADMIN_TOKEN: string }).ADMIN_TOKEN;
  } catch {
    throw new Error(`ADMIN_TOKEN is not set and ${file} is not there: start the service with npm start first, or set ADMIN_TOKEN`);
  }
}

async function main() {
  const baseUrl = (process.env.BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
  const merchant = await provisionDemo(baseUrl, adminTokenFromEnvironment(), process.env.TOPUP_CALLBACK_URL);
  const stamp = Date.now().toString(36);
  const lines = [
    `Demo merchant ${merchant.merchantId} on ${baseUrl}: wallet 100.00 USD; product demo-game with SKUs`,
    `demo-gems-100 (1.20, needs account_fields.server_id) and demo-voucher-10 (10.00).`,
    '',
    'The built-in upstream simulator answers by the end of account_id:',
    ...DEMO_ACCOUNTS.map((a) => `  ${a.accountId}  ${a.outcome}`),
    '',
    'Paste into bash (the app secret is shown only here):',
    '',
    `export TOPUP_BASE_URL='${baseUrl}'`,
    `export TOPUP_API_KEY='${merchant.apiKey}'`,
    `export TOPUP_APP_SECRET='${merchant.appSecret}'`,
    '',
    '# the balance',
    signedCurl('/api/v2/balance', '{}'),
    '',
    '# an order that succeeds (use another out_trade_no, or another account ending, for more)',
    signedCurl(
      '/api/v2/topup/submit',
      `{"out_trade_no":"demo-${stamp}","sku_id":"demo-gems-100","account_id":"12345678","account_fields":{"server_id":"2001"}}`,
    ),
    '',
    '# the order, a moment later',
    'sleep 1',
    signedCurl('/api/v2/topup/query', `{"out_trade_no":"demo-${stamp}"}`),
    '',
    'Signing is explained in docs/signing.md; the TypeScript client in docs/merchant-client.md.',
  ];
  console.log(lines.join('\n'));
}

if (require.main === module) {
  main().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
