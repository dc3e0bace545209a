import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiDocuments } from '../../src/api-docs/api-documents';
import { codesIn } from '../../src/api-docs/schema-kit';
import { ADMIN } from '../back-office/admin-client';
import { CALLBACK_ENV, callbackEndpoint } from '../support/callback-endpoint';
import { FULFILMENT_ENV_SOME_UNKNOWN } from '../support/fulfilment';
import { rawExchange } from '../support/raw-http';
import { RunningService, startService } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { DocumentedApi, rawReply, readReply, Reply } from './documented-api';
import { until } from '../support/until';
import { DOCS_CSP, parseCsp } from '../support/security-headers';

const DOCS = join(__dirname, '../../docs');
const SKU = { product_id: 'mlbb', name: '86 Diamonds', required_account_fields: ['server_id'], supports_account_check: true, on_shelf: true };

interface Merchant {
  merchantId: string;
  apiKey: string;
  appSecret: string;
}

/**
 * The OpenAPI documents served at /docs are kept true by sending the running
 * service real requests, every route and most refusals, and checking every
 * reply against them; and by comparing them with the prose docs.
 */
describe('OpenAPI documents (/docs)', () => {
  let db: TestDatabase;
  let service: RunningService;
  let merchantApi: DocumentedApi;
  let backOffice: DocumentedApi;
  let endpoint: Awaited<ReturnType<typeof callbackEndpoint>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    endpoint = await callbackEndpoint(() => ({ status: 200, body: 'success' }));
    // The four-eyes rule on, above every amount the tests move but the few that show its requests.
    service = await startService(db, {
      ...FULFILMENT_ENV_SOME_UNKNOWN,
      ...CALLBACK_ENV,
      UPSTREAM_SIM_DELAY_MS: '10',
      APPROVAL_THRESHOLD: '100.00',
    });
    const served = async (file: string) => (await fetch(`${service.url}/docs/${file}`)).json();
    merchantApi = new DocumentedApi('merchant-api', await served('merchant-api.json'));
    backOffice = new DocumentedApi('back-office', await served('back-office.json'));
    // The catalogue every test orders from: a SKU, one without an upstream route, one off shelf.
    expect((await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' })).status).toBe(200);
    expect((await admin('PUT', '/admin/v1/skus/mlbb-86', SKU)).status).toBe(200);
    expect((await admin('PUT', '/admin/v1/skus/no-route', { ...SKU, route: null })).status).toBe(200);
    expect((await admin('PUT', '/admin/v1/skus/off-shelf', { ...SKU, on_shelf: false })).status).toBe(200);
  });
  afterAll(async () => {
    await service?.stop();
    await endpoint?.stop();
    await db?.drop();
  });

  /** One request; its reply is checked against the document of its path. */
  async function send(method: string, path: string, init: { body?: string | Buffer | FormData; headers?: Record<string, string> } = {}): Promise<Reply> {
    const reply = await readReply(await fetch(`${service.url}${path}`, { method, headers: init.headers, body: init.body }));
    (path.startsWith('/api/') ? merchantApi : backOffice).check(method, path, reply);
    return reply;
  }

  const staff = (token = ADMIN) => ({ authorization: `Bearer ${token}` });
  const admin = (method: string, path: string, body?: unknown, token = ADMIN) =>
    send(method, path, { body: body === undefined ? undefined : JSON.stringify(body), headers: staff(token) });

  function signed(merchant: Merchant, path: string, body = '{}', overrides: { timestamp?: string; nonce?: string; signature?: string; method?: string } = {}) {
    const timestamp = overrides.timestamp ?? String(Math.floor(Date.now() / 1000));
    const nonce = overrides.nonce ?? randomBytes(8).toString('hex');
    const signature =
      overrides.signature ??
      createHmac('sha256', merchant.appSecret)
        .update(`${timestamp}\n${nonce}\n${path.split('?')[0]}\n${body}`)
        .digest('hex');
    const method = overrides.method ?? 'POST';
    return send(method, path, {
      body: method === 'GET' ? undefined : body,
      headers: { 'X-Api-Key': merchant.apiKey, 'X-Timestamp': timestamp, 'X-Nonce': nonce, 'X-Signature': signature },
    });
  }

  async function newMerchant(extra: Record<string, unknown> = {}): Promise<Merchant> {
    const created = await admin('POST', '/admin/v1/merchants', { name: 'Docs merchant', callback_url: endpoint.url, ...extra });
    expect(created.status).toBe(201);
    const { merchant_id: merchantId, api_key: apiKey, app_secret: appSecret } = created.body.data;
    expect((await admin('PUT', `/admin/v1/merchants/${merchantId}/prices/mlbb-86`, { price: '1.20' })).status).toBe(200);
    return { merchantId, apiKey, appSecret };
  }

  const submitBody = (outTradeNo: string, accountId = '12345678', fields: Record<string, string> = { server_id: '1' }, skuId = 'mlbb-86') =>
    JSON.stringify({ out_trade_no: outTradeNo, sku_id: skuId, account_id: accountId, account_fields: fields });

  it('documents every route the controllers serve, and only those, with each body generated from its DTO', () => {
    // Problems are what the documents could not say: a route without an operation, an operation without a route, a rule without a JSON Schema.
    expect(service.app.get(ApiDocuments).problems).toEqual([]);
    const bodies = (api: DocumentedApi) =>
      Object.entries(api.document.paths as Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>)
        .flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation.requestBody] as const))
        .filter(([, body]) => body?.content['application/json'])
        .map(([operation, body]) => `${operation} ${body!.content['application/json'].schema.$ref ?? 'by hand'}`);
    expect(bodies(merchantApi)).toEqual([
      'POST /api/v2/products #/components/schemas/EmptyBody',
      'POST /api/v2/topup/submit #/components/schemas/SubmitOrderBody',
      'POST /api/v2/topup/query #/components/schemas/QueryOrderBody',
      'POST /api/v2/balance #/components/schemas/EmptyBody',
      // Any body at all: the signing self-check.
      'POST /api/v2/tools/verify-signature by hand',
    ]);
    expect(bodies(backOffice).filter((body) => body.endsWith('by hand'))).toEqual([]);
    expect(bodies(backOffice).length).toBeGreaterThanOrEqual(18);
  });

  it('every reply of the back office matches its document', async () => {
    // Provisioning (the catalogue was put in place before the tests).
    expect((await admin('PUT', '/admin/v1/skus/orphan', { ...SKU, product_id: 'nope' })).status).toBe(404);
    const auditor = (await admin('POST', '/admin/v1/staff', { name: 'Ada', role: 'auditor' })).body.data.token as string;
    const reconciler = (await admin('POST', '/admin/v1/staff', { name: 'Rita', role: 'reconciler' })).body.data.token as string;
    const merchant = await newMerchant({ ip_whitelist: [], low_balance_threshold: '100.00' });
    const id = merchant.merchantId;
    expect((await admin('PUT', `/admin/v1/merchants/${id}/prices/no-route`, { price: '1.00' })).status).toBe(200);
    expect((await admin('PUT', `/admin/v1/merchants/${id}/prices/off-shelf`, { price: '1.00' })).status).toBe(200);
    expect((await admin('PUT', `/admin/v1/merchants/${id}/prices/nope`, { price: '1.00' })).status).toBe(404);
    expect((await admin('PUT', '/admin/v1/merchants/mch_0000000000000000/prices/mlbb-86', { price: '1.00' })).status).toBe(404);
    expect((await admin('POST', `/admin/v1/merchants/${id}/deposits`, { amount: '10.00', reference: 'r-1' })).status).toBe(201);
    expect((await admin('POST', `/admin/v1/merchants/${id}/deposits`, { amount: '11.00', reference: 'r-1' })).status).toBe(409);
    expect((await admin('POST', `/admin/v1/merchants/${id}/deposits`, { reference: 'r-2' })).status).toBe(400);
    expect((await admin('POST', `/admin/v1/merchants/${id}/deposits`, { amount: 5, reference: 'r-2' })).status).toBe(422);
    expect((await send('POST', `/admin/v1/merchants/${id}/deposits`, { body: '{"amount":', headers: staff() })).status).toBe(400);
    expect((await send('POST', `/admin/v1/merchants/${id}/deposits`, { body: 'x'.repeat(70_000), headers: staff() })).status).toBe(413);
    expect((await admin('GET', `/admin/v1/merchants/${id}`)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/merchants/mch_0000000000000000')).status).toBe(404);
    expect((await admin('GET', '/admin/v1/merchants/bad%20id')).status).toBe(422);
    expect((await admin('GET', '/admin/v1/merchants/%ED%A0%80')).status).toBe(400);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { rate_limit_per_second: 500 })).status).toBe(200);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { low_balance_threshold: null })).status).toBe(200);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { low_balance_threshold: '100' })).status).toBe(200);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { low_balance_threshold: 100 })).status).toBe(422);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { callback_url: 'http://127.0.0.1:1/x' })).body.warnings).toBeUndefined();
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { callback_url: endpoint.url })).status).toBe(200);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, {})).status).toBe(422);
    expect((await admin('POST', `/admin/v1/merchants/${id}/app-secret`, { overlap_seconds: 3600 })).status).toBe(200);
    expect((await admin('DELETE', `/admin/v1/merchants/${id}/app-secret/previous`)).status).toBe(200);
    expect((await admin('GET', `/admin/v1/merchants/${id}`, undefined, 'not-a-token')).status).toBe(401);
    expect((await send('GET', `/admin/v1/merchants/${id}`)).status).toBe(401);
    expect((await admin('PATCH', `/admin/v1/merchants/${id}`, { status: 'active' }, auditor)).status).toBe(403);
    // Lists and staff management.
    expect((await admin('GET', '/admin/v1/merchants?name=docs&limit=2')).status).toBe(200);
    expect((await admin('GET', '/admin/v1/merchants?colour=red')).status).toBe(422);
    expect((await admin('GET', '/admin/v1/products')).status).toBe(200);
    expect((await admin('GET', '/admin/v1/skus?product_id=mlbb&on_shelf=true')).status).toBe(200);
    expect((await admin('GET', `/admin/v1/merchants/${id}/prices`)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/merchants/mch_0000000000000000/prices')).status).toBe(404);
    expect((await admin('GET', '/admin/v1/staff?role=auditor')).status).toBe(200);
    const temporary = (await admin('POST', '/admin/v1/staff', { name: 'Temp', role: 'auditor' })).body.data.staff_id as string;
    expect((await admin('POST', `/admin/v1/staff/${temporary}/token`)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/staff/${temporary}/disable`)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/staff/${temporary}/token`)).status).toBe(409);
    expect((await admin('POST', '/admin/v1/staff/stf_0000000000000000/disable')).status).toBe(404);
    expect((await admin('GET', '/admin/v1/status')).status).toBe(200);
    expect((await admin('GET', '/admin/v1/nothing-here')).status).toBe(404);
    expect((await admin('DELETE', '/admin/v1/staff')).status).toBe(404);

    // Orders to reconcile, settle and call back: a fresh merchant (the secret above was rotated).
    const buyer = await newMerchant();
    expect((await admin('POST', `/admin/v1/merchants/${buyer.merchantId}/deposits`, { amount: '50.00', reference: 'opening' })).status).toBe(201);
    const delivered = (await signed(buyer, '/api/v2/topup/submit', submitBody('BO-1'))).body.data.order_no as string;
    const unknown = (await signed(buyer, '/api/v2/topup/submit', submitBody('BO-2', '55555999'))).body.data.order_no as string;
    const queue = await until(
      () => admin('GET', '/admin/v1/reconciliation/orders?limit=10', undefined, reconciler),
      (reply) => reply.body.data?.total === 1,
    );
    expect(queue.body.data.orders[0].order_no).toBe(unknown);
    expect((await admin('GET', '/admin/v1/reconciliation/orders?limit=9999', undefined, reconciler)).status).toBe(422);
    expect((await admin('GET', `/admin/v1/orders/${unknown}`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `/admin/v1/orders?merchant_id=${buyer.merchantId}`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/orders?stage=unknown&created_from=yesterday', undefined, auditor)).status).toBe(422);
    expect((await admin('GET', '/admin/v1/orders/T00000000000000000000000000')).status).toBe(404);
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${unknown}/requery`, undefined, reconciler)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${unknown}/resolve`, { outcome: 'failed' }, reconciler)).status).toBe(400);
    const resolution = { outcome: 'success', note: 'confirmed by the provider' };
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${unknown}/resolve`, resolution, reconciler)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/reconciliation/orders/${unknown}/resolve`, resolution, reconciler)).status).toBe(409);
    await until(
      () => admin('GET', `/admin/v1/orders/${delivered}/callbacks`, undefined, reconciler),
      (reply) => reply.body.data?.state === 'acknowledged',
    );
    expect((await admin('POST', `/admin/v1/orders/${delivered}/callbacks/redeliver`, undefined, reconciler)).status).toBe(202);
    expect((await admin('GET', '/admin/v1/orders/T00000000000000000000000000/callbacks', undefined, reconciler)).status).toBe(404);

    // The four-eyes rule: a deposit over APPROVAL_THRESHOLD becomes a request, decided by another admin.
    const secondAdmin = (await admin('POST', '/admin/v1/staff', { name: 'Bea', role: 'admin' })).body.data.token as string;
    const asked = await admin('POST', `/admin/v1/merchants/${buyer.merchantId}/deposits`, { amount: '500.00', reference: 'wire-9', note: 'a large wire' });
    expect(asked.status).toBe(202);
    const approvalId = asked.body.data.approval_id as string;
    expect((await admin('POST', `/admin/v1/merchants/${buyer.merchantId}/deposits`, { amount: '600.00', reference: 'wire-9' })).status).toBe(409);
    expect((await admin('GET', '/admin/v1/approvals?status=pending&kind=deposit', undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/approvals?status=soon')).status).toBe(422);
    expect((await admin('GET', `/admin/v1/approvals/${approvalId}`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/approvals/apr_0000000000000000')).status).toBe(404);
    expect((await admin('POST', `/admin/v1/approvals/${approvalId}/approve`, { note: 'my own' })).status).toBe(403);
    expect((await admin('POST', `/admin/v1/approvals/${approvalId}/approve`, {}, secondAdmin)).status).toBe(400);
    expect((await admin('POST', `/admin/v1/approvals/${approvalId}/approve`, { note: 'matches the bank' }, secondAdmin)).status).toBe(200);
    expect((await admin('POST', `/admin/v1/approvals/${approvalId}/reject`, { note: 'too late' }, secondAdmin)).status).toBe(409);
    const declined = (await admin('POST', `/admin/v1/merchants/${buyer.merchantId}/deposits`, { amount: '700.00', reference: 'wire-10' })).body.data
      .approval_id;
    expect((await admin('POST', `/admin/v1/approvals/${declined}/reject`, { note: 'no such wire' }, secondAdmin)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/approvals')).status).toBe(200);
    // Adjustments: at once under the threshold, a request over it, and the ledger's refusals.
    const adjustments = `/admin/v1/wallets/${buyer.merchantId}/adjustments`;
    const credit = { direction: 'credit', amount: '1.20', reason: 'UPSTREAM_REPORT_FAILED', note: 'report line 3', reference: 'adj-1', order_no: delivered };
    expect((await admin('POST', adjustments, credit, reconciler)).status).toBe(201);
    expect((await admin('POST', adjustments, { ...credit, reference: 'adj-2' }, reconciler)).status).toBe(409);
    expect((await admin('POST', adjustments, { ...credit, reference: 'adj-3', order_no: 'T00000000000000000000000000' }, reconciler)).status).toBe(404);
    expect((await admin('POST', adjustments, { ...credit, reference: 'adj-4', amount: '150.00', order_no: undefined }, reconciler)).status).toBe(202);
    const debit = { ...credit, reference: 'adj-5', direction: 'debit', amount: '99.00', order_no: undefined };
    expect((await admin('POST', `/admin/v1/wallets/${id}/adjustments`, debit, reconciler)).status).toBe(402);
    expect((await admin('POST', adjustments, { ...credit, reason: 'lower case' }, reconciler)).status).toBe(422);
    expect((await admin('POST', adjustments, { direction: 'credit' }, reconciler)).status).toBe(400);
    expect((await admin('POST', '/admin/v1/wallets/mch_0000000000000000/adjustments', credit, reconciler)).status).toBe(404);
    await service.catchUp();
    expect((await admin('GET', `/admin/v1/orders/${delivered}`, undefined, auditor)).body.data.adjustments).toHaveLength(1);

    // The operations dashboard, the orders above in its series and the first merchant under its threshold.
    const dashboard = await admin('GET', '/admin/v1/operations/dashboard');
    expect(dashboard.status).toBe(200);
    expect(dashboard.body.data.now.low_balance.total).toBeGreaterThanOrEqual(1);
    expect(dashboard.body.data.series.some((point: { orders: { accepted: number } }) => point.orders.accepted > 0)).toBe(true);
    expect((await admin('GET', '/admin/v1/operations/dashboard?window=24h')).status).toBe(200);
    expect((await admin('GET', '/admin/v1/operations/dashboard?window=7d')).status).toBe(422);
    expect((await admin('GET', '/admin/v1/operations/dashboard', undefined, reconciler)).status).toBe(403);

    // Bulk reconciliation: a re-query job, reports uploaded and fetched, and their applies.
    const pending = (await signed(buyer, '/api/v2/topup/submit', submitBody('BO-3', '55556999'))).body.data.order_no as string;
    // The queue is the read model a report is matched against: wait for it, not for the order's own stream.
    await until(
      () => admin('GET', '/admin/v1/reconciliation/orders?limit=500', undefined, reconciler),
      (reply) => (reply.body.data?.orders ?? []).some((order: { order_no: string }) => order.order_no === pending),
    );
    const job = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: buyer.merchantId }, reconciler);
    expect(job.status).toBe(202);
    const jobPath = `/admin/v1/reconciliation/requery/${job.body.data.job_id}`;
    expect((await admin('POST', '/admin/v1/reconciliation/requery', {}, reconciler)).status).toBe(422);
    expect((await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: buyer.merchantId }, auditor)).status).toBe(403);
    await until(
      () => admin('GET', jobPath, undefined, reconciler),
      (reply) => reply.body.data?.status === 'done',
    );
    expect((await admin('GET', `${jobPath}?proposal=leave&limit=1`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${jobPath}?proposal=maybe`, undefined, auditor)).status).toBe(422);
    expect((await admin('GET', '/admin/v1/reconciliation/requery/rq_0000000000000000', undefined, reconciler)).status).toBe(404);
    expect((await admin('GET', '/admin/v1/reconciliation/requery?limit=5', undefined, auditor)).status).toBe(200);
    expect((await admin('POST', `${jobPath}/apply`, { note: 'nothing definitive yet' }, reconciler)).status).toBe(200);
    expect((await admin('POST', `${jobPath}/apply`, { note: 'x', orders: [{ order_no: pending }] }, reconciler)).body.data.counts.refused).toBe(1);
    expect((await admin('POST', '/admin/v1/reconciliation/requery/rq_0000000000000000/apply', { note: 'x' }, reconciler)).status).toBe(404);
    expect((await admin('POST', `${jobPath}/apply`, { note: '' }, reconciler)).status).toBe(422);
    const asCsv = (token = reconciler) => ({ ...staff(token), 'content-type': 'text/csv' });
    const report = `order_no,status,amount,currency,reference,completed_at\r\n${pending},delivered,1.20,USD,R-1,2026-11-22T10:00:00Z\r\n`;
    const uploaded = await send('POST', '/admin/v1/reconciliation/reports', { body: report, headers: asCsv() });
    expect(uploaded.status).toBe(201);
    const reportPath = `/admin/v1/reconciliation/reports/${uploaded.body.data.report_id}`;
    expect((await send('POST', '/admin/v1/reconciliation/reports?file_name=again.csv', { body: report, headers: asCsv() })).status).toBe(200);
    const form = new FormData();
    form.append('report', new Blob([report.replace('R-1', 'R-2')]), 'provider.csv');
    expect((await send('POST', '/admin/v1/reconciliation/reports', { body: form, headers: staff(reconciler) })).status).toBe(201);
    const twoFiles = new FormData();
    twoFiles.append('a', new Blob(['x']), 'a.csv');
    twoFiles.append('b', new Blob(['y']), 'b.csv');
    expect((await send('POST', '/admin/v1/reconciliation/reports', { body: twoFiles, headers: staff(reconciler) })).status).toBe(400);
    const broken = await send('POST', '/admin/v1/reconciliation/reports', { body: 'order_no,status\r\nx,maybe\r\n', headers: asCsv() });
    expect(broken.status).toBe(422);
    expect((await send('POST', '/admin/v1/reconciliation/reports?from=2026-01-01T00:00:00Z', { body: report, headers: asCsv() })).status).toBe(422);
    expect(
      (await send('POST', '/admin/v1/reconciliation/reports', { body: '{}', headers: { ...staff(reconciler), 'content-type': 'application/json' } })).status,
    ).toBe(415);
    expect((await send('POST', '/admin/v1/reconciliation/reports', { body: Buffer.alloc(10 * 1024 * 1024 + 1, 'x'), headers: asCsv() })).status).toBe(413);
    expect((await send('POST', '/admin/v1/reconciliation/reports', { body: report, headers: asCsv(auditor) })).status).toBe(403);
    const window = { from: '2026-01-01T00:00:00Z', to: new Date(Date.now() + 60_000).toISOString() };
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', window, reconciler)).status).toBe(201);
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: window.to, to: window.from }, reconciler)).status).toBe(422);
    expect((await admin('POST', '/admin/v1/reconciliation/reports/fetch', { from: window.from }, reconciler)).status).toBe(400);
    expect((await admin('GET', '/admin/v1/reconciliation/reports?limit=2', undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${reportPath}?category=resolvable&limit=10`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${reportPath}?category=everything`, undefined, auditor)).status).toBe(422);
    expect((await admin('GET', '/admin/v1/reconciliation/reports/rp_0000000000000000', undefined, auditor)).status).toBe(404);
    expect((await admin('GET', `${reportPath}/export?category=resolvable`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/reconciliation/reports/rp_0000000000000000/export', undefined, auditor)).status).toBe(404);
    expect((await admin('GET', `${reportPath}/original`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/reconciliation/reports/rp_0000000000000000/original', undefined, auditor)).status).toBe(404);
    expect((await admin('POST', `${reportPath}/apply`, { note: 'the provider delivered it' }, reconciler)).body.data.counts.applied).toBe(1);
    expect((await admin('POST', `/admin/v1/reconciliation/reports/${broken.body.report_id}/apply`, { note: 'x' }, reconciler)).status).toBe(409);
    expect((await admin('POST', '/admin/v1/reconciliation/reports/rp_0000000000000000/apply', { note: 'x' }, reconciler)).status).toBe(404);

    // Audit.
    const wallet = `/admin/v1/wallets/${buyer.merchantId}`;
    expect((await admin('GET', `${wallet}/statement?limit=2`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/statement?format=csv`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/statement?format=xml`, undefined, auditor)).status).toBe(422);
    expect((await admin('GET', `${wallet}/statement/export`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/statement/export?format=csv`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', '/admin/v1/wallets/mch_0000000000000000/statement', undefined, auditor)).status).toBe(404);
    expect((await admin('GET', `${wallet}/balance`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/chain`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/balance?at=2026-01-01T00:00:00Z`, undefined, auditor)).status).toBe(200);
    expect((await admin('GET', `${wallet}/balance?position=1/1&at=2026-01-01T00:00:00Z`, undefined, auditor)).status).toBe(422);
    expect((await admin('POST', '/admin/v1/audit/verify', { merchant_id: buyer.merchantId }, auditor)).status).toBe(200);
    expect((await admin('POST', '/admin/v1/audit/verify', { merchant_id: 'mch_0000000000000000' }, auditor)).status).toBe(404);
    expect((await admin('POST', '/admin/v1/audit/verify', undefined, auditor)).status).toBe(200);
    const started = await admin('POST', '/admin/v1/projections/rebuild', { projection: 'orders' });
    expect(started.status).toBe(202);
    const rebuildId = started.body.data.rebuild_id as string;
    expect((await admin('POST', '/admin/v1/projections/rebuild', { projection: 'orders' })).status).toBeGreaterThanOrEqual(202);
    await until(
      () => admin('GET', `/admin/v1/projections/rebuild/${rebuildId}`),
      (reply) => reply.body.data?.status !== 'running',
    );
    expect((await admin('GET', '/admin/v1/projections/rebuild/rb_0000000000000000')).status).toBe(404);

    // Operations.
    expect((await send('GET', '/health')).status).toBe(200);
    expect((await send('GET', '/health/live')).status).toBe(200);
    expect((await send('GET', '/health/ready')).status).toBe(200);
    expect((await send('GET', '/metrics')).status).toBe(200);
    expect((await send('GET', '/docs')).status).toBe(200);
    expect((await send('GET', '/docs/merchant-api.json')).status).toBe(200);
    expect((await send('GET', '/docs/back-office.json')).status).toBe(200);

    expect(backOffice.problems).toEqual([]);
    // Every documented operation answered at least one request with a 2xx.
    const answered = new Set([...backOffice.seen].filter((s) => /\s2\d\d$/.test(s)).map((s) => s.replace(/\s\d+$/, '')));
    expect(backOffice.operations().filter((op) => !answered.has(op))).toEqual([]);
  });

  it('every reply of the merchant API matches its document', async () => {
    const merchant = await newMerchant();
    const poor = await newMerchant();
    expect((await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/deposits`, { amount: '20.00', reference: 'opening' })).status).toBe(201);
    for (const sku of ['no-route', 'off-shelf']) {
      expect((await admin('PUT', `/admin/v1/merchants/${merchant.merchantId}/prices/${sku}`, { price: '1.00' })).status).toBe(200);
    }
    const submit = (body: string) => signed(merchant, '/api/v2/topup/submit', body);

    expect((await signed(merchant, '/api/v2/products')).status).toBe(200);
    expect((await signed(merchant, '/api/v2/products', '{"x":1}')).status).toBe(422);
    const accepted = await submit(submitBody('MA-1'));
    expect(accepted.status).toBe(202);
    expect((await submit(submitBody('MA-1'))).status).toBe(200);
    expect((await submit(submitBody('MA-1', '87654321'))).status).toBe(409);
    expect((await signed(poor, '/api/v2/topup/submit', submitBody('MA-2'))).status).toBe(402);
    expect((await submit(JSON.stringify({ out_trade_no: 'MA-3' }))).status).toBe(400);
    expect((await submit(JSON.stringify({ out_trade_no: 5 }))).status).toBe(422);
    expect((await submit(submitBody('MA-4', '1', { server_id: '1', zone: '2' }))).status).toBe(400);
    expect((await submit(submitBody('MA-5', '1', {}, 'nope'))).status).toBe(422);
    expect((await submit(submitBody('MA-6', '1', { server_id: '1' }, 'off-shelf'))).status).toBe(422);
    expect((await submit(submitBody('MA-7', '1', { server_id: '1' }, 'no-route'))).status).toBe(400);
    expect((await submit('[1]')).status).toBe(400);
    expect((await signed(merchant, '/api/v2/topup/query', JSON.stringify({ order_no: accepted.body.data.order_no }))).status).toBe(200);
    expect((await signed(merchant, '/api/v2/topup/query', JSON.stringify({ out_trade_no: 'never' }))).status).toBe(404);
    expect((await signed(merchant, '/api/v2/topup/query', '{}')).status).toBe(400);
    expect((await signed(merchant, '/api/v2/balance')).status).toBe(200);
    expect((await signed(merchant, '/api/v2/tools/verify-signature', 'anything', { signature: 'wrong' })).status).toBe(200);

    // Refusals before the body, in the contract's order.
    expect((await send('POST', '/api/v2/balance', { body: '{}' })).status).toBe(401);
    expect((await send('POST', '/api/v2/tools/verify-signature', { body: '{}', headers: { 'X-Api-Key': 'unknown' } })).status).toBe(401);
    expect((await signed(merchant, '/api/v2/balance', '{}', { timestamp: '1' })).status).toBe(401);
    expect((await signed(merchant, '/api/v2/balance', '{}', { nonce: 'n'.repeat(129) })).status).toBe(401);
    expect((await signed(merchant, '/api/v2/balance', '{}', { signature: 'bad' })).status).toBe(401);
    expect((await signed(merchant, '/api/v2/balance', '{}', { nonce: 'used-once' })).status).toBe(200);
    expect((await signed(merchant, '/api/v2/balance', '{}', { nonce: 'used-once' })).status).toBe(401);
    expect((await signed(merchant, '/api/v2/balance?x=1')).status).toBe(400);
    expect((await signed(merchant, '/api/v2/balance', 'x'.repeat(70_000))).status).toBe(413);
    expect((await signed(merchant, '/api/v2/balance', '{}', { method: 'GET' })).status).toBe(405);
    expect((await signed(merchant, '/api/v1/balance')).status).toBe(404);
    expect((await signed(merchant, '/api/v2/nothing')).status).toBe(404);
    const fenced = await newMerchant({ ip_whitelist: ['10.9.9.9'] });
    expect((await signed(fenced, '/api/v2/balance')).status).toBe(403);
    const limited = await newMerchant({ rate_limit_per_second: 1 });
    const burst = await Promise.all(Array.from({ length: 4 }, () => signed(limited, '/api/v2/balance')));
    expect(burst.map((r) => r.status)).toContain(429);
    expect((await admin('PATCH', `/admin/v1/merchants/${poor.merchantId}`, { status: 'suspended' })).status).toBe(200);
    expect((await signed(poor, '/api/v2/balance')).status).toBe(403);

    // Anything unexpected.
    await service.pool.query('alter table rm_orders rename to rm_orders_away');
    try {
      expect((await signed(merchant, '/api/v2/topup/query', JSON.stringify({ out_trade_no: 'MA-1' }))).status).toBe(500);
    } finally {
      await service.pool.query('alter table rm_orders_away rename to rm_orders');
    }

    // Bytes that are not HTTP.
    const check = async (bytes: string, status: number) => {
      const reply = rawReply(await rawExchange(service.url, bytes));
      expect(reply.status).toBe(status);
      merchantApi.check('POST', '/api/v2/balance', reply);
    };
    await check('POST /api/v2/balance HTTP/1.1\r\nHost: x\r\nBad Header : 1\r\n\r\n', 400);
    await check(`POST /api/v2/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431);

    expect(merchantApi.problems).toEqual([]);
    const answered = new Set([...merchantApi.seen].filter((s) => /\s2\d\d$/.test(s)).map((s) => s.replace(/\s\d+$/, '')));
    expect(merchantApi.operations().filter((op) => !answered.has(op))).toEqual([]);
  });

  it('the page at /docs loads only its own files, each under the same policy, and a name it does not serve is 404', async () => {
    const reply = await send('GET', '/docs');
    expect(reply.contentType).toBe('text/html; charset=utf-8');
    const policy = (reply.headers as Headers).get('content-security-policy');
    expect(parseCsp(policy)).toEqual(parseCsp(DOCS_CSP));
    // No inline script or style: the policy would refuse them.
    expect(reply.text).not.toMatch(/<script(?![^>]*\ssrc=)|<style|\sstyle=|\son[a-z]+=/i);
    const files = [...reply.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(files.filter((file) => !file.startsWith('/docs/'))).toEqual([]);
    const assets = files.filter((file) => file.startsWith('/docs/assets/'));
    expect(assets.sort()).toEqual(['/docs/assets/docs.css', '/docs/assets/docs.js', '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']);
    for (const asset of assets) {
      const served = await fetch(`${service.url}${asset}`);
      expect([asset, served.status, served.headers.get('content-security-policy')]).toEqual([asset, 200, policy]);
      expect(served.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      // No stylesheet and none of the page's own code reaches for another host (Swagger UI's script names its validator,
      // which the page turns off; the browser test sees every request the page makes stay on this service).
      const text = await served.text();
      if (asset !== '/docs/assets/swagger-ui-bundle.js')
        expect([asset, text.match(/(?:url\(|["'])https?:\/\/(?!www\.w3\.org)[^"')\s]+/gi)]).toEqual([asset, null]);
    }
    const missing = await fetch(`${service.url}/docs/assets/..%2Fapi-docs.module.js`);
    expect([missing.status, ((await missing.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND']);
  });

  it('the checker itself refuses replies its document does not describe', async () => {
    const merchant = await newMerchant();
    const balance = await signed(merchant, '/api/v2/balance');
    const refused = await signed(merchant, '/api/v2/topup/submit', submitBody('CHK-1'));
    expect([balance.status, refused.status]).toEqual([200, 402]);
    const document = structuredClone(merchantApi.document);
    document.components.schemas.Balance.properties.balance = { type: 'number' };
    delete document.paths['/api/v2/topup/submit'].post.responses['402'];
    const tampered = new DocumentedApi('tampered', document);
    tampered.check('POST', '/api/v2/balance', balance);
    tampered.check('POST', '/api/v2/topup/submit', refused);
    tampered.check('POST', '/api/v2/balance', { ...balance, headers: new Headers({ 'content-type': 'application/json' }) });
    expect(tampered.problems).toEqual([
      expect.stringMatching(/^POST \/api\/v2\/balance -> 200: reply\/data\/balance must be number/),
      expect.stringMatching(/^POST \/api\/v2\/topup\/submit -> 402: status 402 is not documented/),
      'POST /api/v2/balance -> 200: no X-Request-Id',
      expect.stringMatching(/^POST \/api\/v2\/balance -> 200: reply\/data\/balance must be number/),
    ]);
  });

  describe('agrees with the prose docs', () => {
    it('docs/merchant-api.md: every endpoint, every error code (with its status) and every fail_code is in the document', () => {
      const prose = readFileSync(join(DOCS, 'merchant-api.md'), 'utf8');
      const document = merchantApi.document;
      const endpoints = [...prose.matchAll(/^### POST (\/api\/v2\/\S+)$/gm)].map((m) => m[1]);
      expect(endpoints).toHaveLength(5);
      for (const path of endpoints) expect(document.paths[path]?.post).toBeDefined();
      expect(Object.keys(document.paths).sort()).toEqual([...endpoints].sort());

      // Rows like "| 5 | 401 | `INVALID_API_KEY` | ..." and "| 431 | `HEADERS_TOO_LARGE` | ...".
      const errors = [...prose.matchAll(/^\|(?: \d+ \|)? (\d{3}) \| `([A-Z_]+)` \|/gm)].map((m) => ({ status: m[1], code: m[2] }));
      expect(errors.length).toBeGreaterThanOrEqual(30);
      const documented = new Set<string>();
      for (const item of Object.values(document.paths) as Record<string, { responses: Record<string, unknown> }>[]) {
        for (const [status, reply] of Object.entries(item.post.responses)) for (const code of codesIn(reply)) documented.add(`${status} ${code}`);
      }
      const success = new Set(['200 OK', '202 ACCEPTED', '200 DUPLICATE']);
      expect(errors.map((e) => `${e.status} ${e.code}`).filter((e) => !documented.has(e) && !success.has(e))).toEqual([]);

      const failCodes = [...prose.matchAll(/^ {2}\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
      expect(failCodes.length).toBeGreaterThanOrEqual(5);
      expect(document.components.schemas.Order.properties.fail_code.anyOf[0].enum.sort()).toEqual([...failCodes].sort());
    });

    it('docs/back-office-api.md: every route and every error code is in the document', () => {
      const prose = readFileSync(join(DOCS, 'back-office-api.md'), 'utf8');
      const document = backOffice.document;
      const headings = [...prose.matchAll(/^### `(GET|POST|PUT|PATCH|DELETE) (\/admin\/v1\/\S+)`/gm)].map((m) => [m[1], m[2]]);
      const toTemplate = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}');
      const operations = new Set(backOffice.operations());
      // The table of the other routes, a row per capability: "`GET /admin/v1/orders/{order_no}/callbacks`, `POST .../callbacks/redeliver`".
      // "..." shortens the row's first path: to its parent (a sibling route) or to itself (a route below it); either reading must be in the document.
      const fromTable = prose
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .flatMap((line) => {
          const found = [...line.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/admin\/v1\/[^`\s]+|\.\.\.[^`\s]+)`/g)];
          const base = found[0]?.[2] ?? '';
          return found.map((m) => {
            if (!m[2].startsWith('...')) return `${m[1]} ${toTemplate(m[2])}`;
            const readings = [base.slice(0, base.lastIndexOf('/')), base].map((prefix) => `${m[1]} ${toTemplate(prefix + m[2].slice(3))}`);
            return readings.find((route) => operations.has(route)) ?? readings.join(' or ');
          });
        });
      const routes = [...headings.map(([method, path]) => `${method} ${toTemplate(path)}`), ...fromTable];
      expect(routes.length).toBeGreaterThanOrEqual(20);
      expect([...new Set(routes)].filter((route) => !operations.has(route))).toEqual([]);

      const codes = [...prose.matchAll(/^\| (\d{3}) \| (`[A-Z_]+`(?:, `[A-Z_]+`)*) \|/gm)].flatMap((m) => [...m[2].matchAll(/`([A-Z_]+)`/g)].map((c) => c[1]));
      expect(codes.length).toBeGreaterThanOrEqual(12);
      const documented = codesIn(document);
      expect(codes.filter((code) => !documented.has(code))).toEqual([]);
    });
  });
});
