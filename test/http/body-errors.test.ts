import { adminClient } from '../back-office/admin-client';
import { provisionMerchant, signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService, serviceOnFreshDatabase } from '../support/service';

// The same fault in a body gets the same code and the same words from both
// APIs, and a body that is not JSON is answered with where it stops being JSON.
describe('body errors, alike in the merchant API and the back office', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;

  beforeAll(async () => {
    ({ service, teardown } = await serviceOnFreshDatabase());
    merchant = await provisionMerchant(service);
    admin = adminClient(service.url);
  });
  afterAll(async () => teardown());

  const merchantApi = async (body: string) => (await signedFetch(service, merchant, { path: '/api/v2/topup/submit', body })).body;
  const backOffice = async (body: string) => (await admin('POST', '/admin/v1/staff', undefined, { raw: body })).body;

  it.each<[string, string, { code: string; message: string }]>([
    [
      'not JSON: where it stops being JSON',
      '{"out_trade_no": "A-1",\n "sku_id": }',
      { code: 'INVALID_JSON', message: 'The body is not valid JSON at line 2, column 12: expected a value, found "}"' },
    ],
    ['cut off', '{"name": "Rita"', { code: 'INVALID_JSON', message: 'The body is not valid JSON at line 1, column 16: expected , or }, the text ends there' }],
    ['empty', '', { code: 'INVALID_JSON', message: 'The body is empty: send a JSON object, {} when there is nothing in it' }],
    ['white space only', ' \n', { code: 'INVALID_JSON', message: 'The body is empty: send a JSON object, {} when there is nothing in it' }],
    ['not an object', '[1]', { code: 'INVALID_JSON', message: 'The body must be a JSON object' }],
    ['a key twice', '{"name": "a", "name": "b"}', { code: 'INVALID_JSON', message: 'The key "name" appears twice in one object' }],
  ])('%s', async (_name, body, expected) => {
    const replies = { merchantApi: await merchantApi(body), backOffice: await backOffice(body) };
    expect(replies).toEqual({ merchantApi: { success: false, ...expected }, backOffice: { success: false, ...expected } });
  });

  it("an unknown field, a missing field and a NUL: the same words, naming each API's own field", async () => {
    const submit = { out_trade_no: 'B-1', sku_id: 'plain-10', account_id: '12345678', account_fields: {} };
    const staff = { name: 'Rita', role: 'auditor' };
    const unknown = [await merchantApi(JSON.stringify({ ...submit, colour: 'red' })), await backOffice(JSON.stringify({ ...staff, colour: 'red' }))];
    expect(unknown[0]).toEqual(unknown[1]);
    expect(unknown[0]).toEqual({ success: false, code: 'VALIDATION_FAILED', message: '"colour" is not a field of this request', field: 'colour' });

    const missing = [await merchantApi('{}'), await backOffice('{}')];
    expect(missing).toEqual([
      { success: false, code: 'MISSING_REQUIRED_FIELD', message: 'out_trade_no is required', field: 'out_trade_no' },
      { success: false, code: 'MISSING_REQUIRED_FIELD', message: 'name is required', field: 'name' },
    ]);

    const nul = [await merchantApi(JSON.stringify({ ...submit, account_id: 'a\u0000' })), await backOffice(JSON.stringify({ ...staff, name: 'a\u0000' }))];
    expect(nul).toEqual([
      { success: false, code: 'VALIDATION_FAILED', message: 'account_id must not contain NUL characters or unpaired UTF-16 surrogates', field: 'account_id' },
      { success: false, code: 'VALIDATION_FAILED', message: 'name must not contain NUL characters or unpaired UTF-16 surrogates', field: 'name' },
    ]);
  });
});
