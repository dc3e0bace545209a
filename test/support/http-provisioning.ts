import { adminClient } from '../back-office/admin-client';
import { ChildService } from './child-service';
import { signedFetch, TestMerchant } from './merchant-fixture';

/**
 * A funded merchant and a priced SKU, provisioned through the back office over
 * HTTP, for tests of a service running as its own process: product "mlbb",
 * SKU "mlbb-86" (needs server_id) at 1.20.
 */
export async function provisionOverHttp(baseUrl: string, deposit = '100.00'): Promise<TestMerchant> {
  const admin = adminClient(baseUrl);
  const created = await admin.createMerchant();
  const steps: [string, string, unknown][] = [
    ['POST', `/admin/v1/merchants/${created.merchant_id}/deposits`, { amount: deposit, reference: 'opening' }],
    ['PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' }],
    [
      'PUT',
      '/admin/v1/skus/mlbb-86',
      { product_id: 'mlbb', name: '86 Diamonds', required_account_fields: ['server_id'], supports_account_check: true, on_shelf: true },
    ],
    ['PUT', `/admin/v1/merchants/${created.merchant_id}/prices/mlbb-86`, { price: '1.20' }],
  ];
  for (const [method, path, body] of steps) {
    const reply = await admin(method, path, body);
    if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  return { merchantId: created.merchant_id, apiKey: created.api_key, appSecret: created.app_secret };
}

/** Submits one order of the SKU provisionOverHttp prices (mlbb-86, server 2001) for `accountId`; the reply. */
export function submitOverHttp(
  service: Pick<ChildService, 'url'>,
  merchant: TestMerchant,
  outTradeNo: string,
  accountId: string,
): ReturnType<typeof signedFetch> {
  const body = JSON.stringify({ out_trade_no: outTradeNo, sku_id: 'mlbb-86', account_id: accountId, account_fields: { server_id: '2001' } });
  return signedFetch(service, merchant, { path: '/api/v2/topup/submit', body });
}
