import { createHmac, randomBytes } from 'node:crypto';
import { DepositFunds } from '../../src/ledger/commands/deposit-funds/deposit-funds.command';
import { OpenWallet } from '../../src/ledger/commands/open-wallet/open-wallet.command';
import { AppSecretCipher } from '../../src/merchant-directory/app-secret.cipher';
import { TIMESTAMP_TOLERANCE_SECONDS } from '../../src/merchant-api/gateway/merchant-gateway.middleware';
import { RunningService, TEST_ENV } from './service';

export interface TestMerchant {
  merchantId: string;
  apiKey: string;
  appSecret: string;
}

/**
 * A merchant with a funded wallet, written straight to the provisioning
 * tables (the back office has its own tests), plus a catalogue entry priced
 * for it: product "mlbb", SKU "mlbb-86" (needs server_id) at 1.20 and SKU
 * "plain-10" (no account fields) at 10.00.
 */
export async function provisionMerchant(
  service: RunningService,
  options: { deposit?: bigint; ipWhitelist?: string[]; status?: 'active' | 'suspended'; rateLimit?: number; callbackUrl?: string } = {},
): Promise<TestMerchant> {
  const merchantId = `mch_${randomBytes(8).toString('hex')}`;
  const apiKey = `ak_${randomBytes(16).toString('hex')}`;
  const appSecret = randomBytes(32).toString('hex');
  const sealed = new AppSecretCipher(Buffer.from(TEST_ENV.SECRETS_KEY, 'hex')).encrypt(appSecret);
  await service.pool.query(
    `insert into merchants (merchant_id, name, currency, api_key, app_secret_enc, ip_whitelist, status, rate_limit_per_second, callback_url, created_by, updated_by)
     values ($1, 'Test merchant', 'USD', $2, $3, $4, $5, $6, $7, 'test', 'test')`,
    [merchantId, apiKey, sealed, options.ipWhitelist ?? [], options.status ?? 'active', options.rateLimit ?? 10_000, options.callbackUrl ?? null],
  );
  await service.commands.execute(new OpenWallet(merchantId, 'USD'));
  if ((options.deposit ?? 10_000n) > 0n) {
    await service.commands.execute(new DepositFunds(merchantId, 'fixture', options.deposit ?? 10_000n, 'test'));
  }
  await service.pool.query(`insert into products (product_id, name, updated_by) values ('mlbb', 'Mobile Legends', 'test') on conflict do nothing`);
  await service.pool.query(
    `insert into skus (sku_id, product_id, name, required_account_fields, supports_account_check, updated_by) values
       ('mlbb-86', 'mlbb', '86 Diamonds', '{server_id}', true, 'test'),
       ('plain-10', 'mlbb', 'Voucher 10', '{}', false, 'test')
     on conflict do nothing`,
  );
  await service.pool.query(
    `insert into merchant_prices (merchant_id, sku_id, price, updated_by) values ($1, 'mlbb-86', 120, 'test'), ($1, 'plain-10', 1000, 'test')`,
    [merchantId],
  );
  return { merchantId, apiKey, appSecret };
}

export interface SignedCall {
  path: string;
  body?: string;
  timestamp?: string;
  nonce?: string;
  signature?: string;
  headers?: Record<string, string>;
  method?: string;
  /** Appended to the URL, unsigned. */
  query?: string;
}

/**
 * An X-Timestamp `offsetS` whole seconds from now that stays on its side of
 * the signature's tolerance when it arrives: rounded toward now when inside
 * it ("299 s old" is never a second older) and away from now when outside
 * ("301 s ahead" is never a second nearer).
 */
export function timestampFromNow(offsetS: number): string {
  const seconds = Date.now() / 1000;
  const towardNow = Math.abs(offsetS) <= TIMESTAMP_TOLERANCE_SECONDS;
  const roundUp = offsetS < 0 === towardNow;
  return String((roundUp ? Math.ceil(seconds) : Math.floor(seconds)) + offsetS);
}

/** Sends a request signed the way the spec says, with any part overridable for tampering tests. */
export async function signedFetch(service: Pick<RunningService, 'url'>, merchant: TestMerchant, call: SignedCall) {
  const body = call.body ?? '{}';
  const timestamp = call.timestamp ?? String(Math.floor(Date.now() / 1000));
  const nonce = call.nonce ?? randomBytes(12).toString('hex');
  const signature = call.signature ?? createHmac('sha256', merchant.appSecret).update(`${timestamp}\n${nonce}\n${call.path}\n${body}`).digest('hex');
  const response = await fetch(`${service.url}${call.path}${call.query ?? ''}`, {
    method: call.method ?? 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-Api-Key': merchant.apiKey,
      'X-Timestamp': timestamp,
      'X-Nonce': nonce,
      'X-Signature': signature,
      ...call.headers,
    },
    body: (call.method ?? 'POST') === 'GET' || call.method === 'HEAD' ? undefined : body,
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = { unparsable: text };
  }
  return { status: response.status, body: json, headers: response.headers };
}
