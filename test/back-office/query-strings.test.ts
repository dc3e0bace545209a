import { backOfficeDocument } from '../../src/api-docs/back-office.openapi';
import { merchantApiDocument } from '../../src/api-docs/merchant-api.openapi';
import { serviceOnFreshDatabase } from '../support/service';
import { adminClient, call, failure } from './admin-client';

/**
 * Every query parameter of every route, against hostile query strings: given
 * twice, empty, as an array or an object (`limit[]=`, `limit[x]=`), not
 * decodable, out of range (beyond 64 bits, negative), in a wrong format. Each
 * is refused with 422 VALIDATION_FAILED naming the parameter, never a 5xx.
 * The table must cover every operation the back office's OpenAPI document
 * declares with query parameters, so a new one cannot be left out.
 */

/** A parameter: a value the route accepts, values of the right shape it must refuse, and extreme values it must answer without a 5xx. */
interface Parameter {
  valid: string;
  wrong: string[];
  edges?: string[];
}

interface QueryRoute {
  method: 'GET' | 'POST';
  /** The path as the OpenAPI document writes it. */
  template: string;
  path: () => string;
  parameters: Record<string, Parameter>;
  /** Parameters that only go together: sent with valid values beside the one under test. */
  companions?: Record<string, string>;
  body?: () => { raw: string; contentType: string };
}

const TWO_TO_THE_64 = '18446744073709551616';
const TWO_TO_THE_63 = '9223372036854775808';
const MAX_BIGINT = '9223372036854775807';
const HUGE = '9'.repeat(40);

function integer(valid: string, min: number, max: number): Parameter {
  const below = min > 0 ? [String(min - 1), '-1'] : ['-1'];
  return {
    valid,
    wrong: [...below, String(BigInt(max) + 1n), TWO_TO_THE_63, TWO_TO_THE_64, HUGE, '1.5', '1e3', '0x10', '+1', '-0', ' 1', 'ten', '١'],
    edges: [String(min), String(max)],
  };
}

const instant = (valid = '2026-01-01T00:00:00Z'): Parameter => ({
  valid,
  wrong: [
    'yesterday',
    '2026-11-22',
    '2026-11-22T10:00:00',
    '2026-13-01T00:00:00Z',
    '2026-11-22T25:00:00Z',
    '99999-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.001Z',
    TWO_TO_THE_64,
    '-1',
  ],
  edges: ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999-23:59', '1970-01-01T00:00:00+00:00'],
});

const choice = (valid: string, ...wrong: string[]): Parameter => ({
  valid,
  wrong: [...wrong, valid.toUpperCase(), ` ${valid}`, `${valid}x`].filter((w) => w !== valid),
});
const text = (valid: string, max: number): Parameter => ({ valid, wrong: ['x'.repeat(max + 1)], edges: ['x'.repeat(max), '%', '_', "'", '\\'] });
const identifier = (valid: string): Parameter => ({ valid, wrong: ['a b', 'a/b', 'x'.repeat(65), 'é'], edges: ['x'.repeat(64)] });
const cursor = (): Parameter => ({
  valid: Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'x'])).toString('base64url'),
  wrong: ['abc', Buffer.from('[1,2]').toString('base64url'), Buffer.from('"x"').toString('base64url'), Buffer.from('{}').toString('base64url')],
});
const limit = (max = 200) => integer('10', 1, max);
const offset = () => integer('0', 0, 1_000_000_000);

/**
 * What every parameter must refuse, whatever its type: `name` and a value it accepts,
 * in the raw form a client could send (already percent-encoded where it is).
 */
function hostile(name: string, valid: string): Array<[string, string]> {
  const v = encodeURIComponent(valid);
  return [
    ['given twice', `${name}=${v}&${name}=${v}`],
    ['given twice, once empty', `${name}=${v}&${name}=`],
    ['empty', `${name}=`],
    ['bare', name],
    ['as an array', `${name}[]=${v}`],
    ['as an array of two', `${name}[]=${v}&${name}[]=${v}`],
    ['with an index', `${name}[0]=${v}`],
    ['as an object', `${name}[x]=${v}`],
    ['as an encoded array', `${name}%5B%5D=${v}`],
    ['with a NUL', `${name}=${v}%00`],
    ['with a line break', `${name}=${v}%0A`],
    ['with a DEL', `${name}=${v}%7F`],
    ['not decodable as UTF-8', `${name}=%ED%A0%80`],
    ['a broken escape', `${name}=${v}%E`],
    ['a bare percent sign', `${name}=%`],
    ['10,000 characters long', `${name}=${'9'.repeat(10_000)}`],
  ];
}

/** Query strings no route takes, in every shape: for the routes that take none. */
const STRANGERS: Array<[query: string, field: string]> = [
  ['surprise=1', 'surprise'],
  ['surprise=1&surprise=2', 'surprise'],
  ['surprise', 'surprise'],
  ['surprise[]=1', 'surprise[]'],
  ['surprise[x]=1', 'surprise[x]'],
  ['surprise=%ED%A0%80', 'surprise'],
  ['%FF=1', '%FF'],
  [`position=${TWO_TO_THE_64}/0`, 'position'],
  [`limit=${'9'.repeat(10_000)}`, 'limit'],
];

type Operations = Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>;

/** Every operation of a document as method, template and whether it takes query parameters. */
const operationsOf = (document: { paths: unknown }) =>
  Object.entries(document.paths as Operations).flatMap(([template, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      template,
      query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
    })),
  );

describe('back office: hostile query strings', () => {
  let env: Awaited<ReturnType<typeof serviceOnFreshDatabase>>;
  let admin: ReturnType<typeof adminClient>;
  let merchantId: string;
  let reportId: string;
  let jobId = 'rq_0000000000000000';
  const csv = 'order_no,status,amount,currency,reference,completed_at\r\n';

  beforeAll(async () => {
    env = await serviceOnFreshDatabase();
    admin = adminClient(env.service.url);
    merchantId = (await admin.createMerchant()).merchant_id;
    const deposit = await admin('POST', `/admin/v1/merchants/${merchantId}/deposits`, { amount: '10.00', reference: 'query-strings' });
    if (deposit.status !== 201) throw new Error(`deposit: ${deposit.status} ${JSON.stringify(deposit.body)}`);
    const report = await admin('POST', '/admin/v1/reconciliation/reports', undefined, { raw: csv, headers: { 'content-type': 'text/csv' } });
    reportId = report.body.data.report_id;
    const job = await admin('POST', '/admin/v1/reconciliation/requery', { merchant_id: merchantId });
    if (job.status === 202) jobId = job.body.data.job_id;
    await env.service.catchUp();
  });
  afterAll(() => env?.teardown());

  const routes = (): QueryRoute[] => [
    {
      method: 'GET',
      template: '/admin/v1/staff',
      path: () => '/admin/v1/staff',
      parameters: { role: choice('auditor', 'root'), status: choice('active', 'gone'), limit: limit(), cursor: cursor() },
    },
    {
      method: 'GET',
      template: '/admin/v1/merchants',
      path: () => '/admin/v1/merchants',
      parameters: { name: text('acme', 128), status: choice('active', 'gone'), limit: limit(), cursor: cursor() },
    },
    {
      method: 'GET',
      template: '/admin/v1/products',
      path: () => '/admin/v1/products',
      parameters: { name: text('legends', 128), limit: limit(), cursor: { ...cursor(), valid: Buffer.from('["p-1"]').toString('base64url') } },
    },
    {
      method: 'GET',
      template: '/admin/v1/skus',
      path: () => '/admin/v1/skus',
      parameters: {
        product_id: identifier('p-1'),
        on_shelf: choice('true', 'yes', '1'),
        name: text('gems', 128),
        limit: limit(),
        cursor: { ...cursor(), valid: Buffer.from('["s-1"]').toString('base64url') },
      },
    },
    {
      method: 'GET',
      template: '/admin/v1/merchants/{merchant_id}/prices',
      path: () => `/admin/v1/merchants/${merchantId}/prices`,
      parameters: { limit: limit(), cursor: { ...cursor(), valid: Buffer.from('["s-1"]').toString('base64url') } },
    },
    {
      method: 'GET',
      template: '/admin/v1/orders',
      path: () => '/admin/v1/orders',
      parameters: {
        merchant_id: identifier('mch_0000000000000000'),
        order_no: identifier('T0000'),
        out_trade_no: identifier('A-1'),
        account_id: { valid: '12345678', wrong: ['x'.repeat(65)] },
        status: choice('success', 'unknown'),
        stage: choice('unknown', 'lost', 'none'),
        created_from: instant(),
        created_to: instant(),
        completed_from: instant(),
        completed_to: instant(),
        limit: limit(),
        cursor: cursor(),
      },
    },
    {
      method: 'GET',
      template: '/admin/v1/operations/dashboard',
      path: () => '/admin/v1/operations/dashboard',
      parameters: { window: choice('24h', '2h', '1d') },
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/orders',
      path: () => '/admin/v1/reconciliation/orders',
      parameters: { limit: integer('10', 0, 500), offset: offset() },
    },
    {
      method: 'GET',
      template: '/admin/v1/approvals',
      path: () => '/admin/v1/approvals',
      parameters: { status: choice('pending', 'open'), kind: choice('deposit', 'refund'), limit: limit(), offset: offset() },
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/requery',
      path: () => '/admin/v1/reconciliation/requery',
      parameters: { limit: limit(), cursor: cursor() },
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/requery/{job_id}',
      path: () => `/admin/v1/reconciliation/requery/${jobId}`,
      parameters: { proposal: choice('leave', 'maybe'), limit: limit(1000), offset: offset() },
    },
    {
      method: 'POST',
      template: '/admin/v1/reconciliation/reports',
      path: () => '/admin/v1/reconciliation/reports',
      parameters: {
        from: instant('2026-01-01T00:00:00Z'),
        to: instant('2026-01-02T00:00:00Z'),
        file_name: { valid: 'report.csv', wrong: ['a/b.csv', 'a\\b.csv', 'x'.repeat(256)] },
      },
      companions: { from: 'to=2026-01-02T00:00:00Z', to: 'from=2026-01-01T00:00:00Z' },
      body: () => ({ raw: csv, contentType: 'text/csv' }),
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/reports',
      path: () => '/admin/v1/reconciliation/reports',
      parameters: { limit: limit(), cursor: cursor() },
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/reports/{report_id}',
      path: () => `/admin/v1/reconciliation/reports/${reportId}`,
      parameters: { category: choice('missing', 'all'), limit: limit(1000), offset: offset() },
    },
    {
      method: 'GET',
      template: '/admin/v1/reconciliation/reports/{report_id}/export',
      path: () => `/admin/v1/reconciliation/reports/${reportId}/export`,
      parameters: { category: choice('missing', 'all') },
    },
    {
      method: 'GET',
      template: '/admin/v1/wallets/{merchant_id}/statement',
      path: () => `/admin/v1/wallets/${merchantId}/statement`,
      parameters: {
        from: instant(),
        to: instant('2027-01-01T00:00:00Z'),
        format: choice('csv', 'xml'),
        after_revision: integer('0', 0, Number.MAX_SAFE_INTEGER),
        limit: integer('10', 1, 100_000),
      },
    },
    {
      method: 'GET',
      template: '/admin/v1/wallets/{merchant_id}/statement/export',
      path: () => `/admin/v1/wallets/${merchantId}/statement/export`,
      parameters: { from: instant(), to: instant('2027-01-01T00:00:00Z'), format: choice('csv', 'xml') },
    },
    {
      method: 'GET',
      template: '/admin/v1/wallets/{merchant_id}/balance',
      path: () => `/admin/v1/wallets/${merchantId}/balance`,
      parameters: {
        at: instant(),
        position: {
          valid: '1/1',
          wrong: [
            '1',
            '1/',
            '/1',
            '-1/0',
            '0/-1',
            `${TWO_TO_THE_64}/0`,
            `0/${TWO_TO_THE_64}`,
            `${TWO_TO_THE_63}/0`,
            `0/${TWO_TO_THE_63}`,
            `${HUGE}/${HUGE}`,
            '1.5/0',
            'a/b',
            '1/1/1',
            '1 /1',
          ],
          edges: ['0/0', `${MAX_BIGINT}/${MAX_BIGINT}`],
        },
        replay: choice('full', 'partial'),
      },
    },
  ];

  async function send(route: QueryRoute, query: string) {
    const body = route.body?.();
    return call(env.service.url, route.method, `${route.path()}?${query}`, undefined, body && { raw: body.raw, headers: { 'content-type': body.contentType } });
  }

  const withCompanion = (route: QueryRoute, name: string, query: string) => (route.companions?.[name] ? `${route.companions[name]}&${query}` : query);

  it('covers every operation the OpenAPI document declares with query parameters, and each of its parameters', () => {
    const documented = Object.fromEntries(
      operationsOf(backOfficeDocument())
        .filter((o) => o.query.length > 0)
        .map((o) => [`${o.method} ${o.template}`, o.query.sort()]),
    );
    const tabled = Object.fromEntries(routes().map((r) => [`${r.method} ${r.template}`, Object.keys(r.parameters).sort()]));
    expect(tabled).toEqual(documented);
  });

  const cases = () =>
    routes().flatMap((route) => Object.keys(route.parameters).map((name): [string, string, string] => [`${route.method} ${route.template}`, name, '']));

  it.each(cases())('%s: %s, sent well, is accepted', async (key, name) => {
    const route = routes().find((r) => `${r.method} ${r.template}` === key)!;
    const reply = await send(route, withCompanion(route, name, `${name}=${encodeURIComponent(route.parameters[name].valid)}`));
    expect({ name, status: reply.status < 300 ? 'accepted' : reply.status, body: reply.status < 300 ? undefined : reply.body }).toEqual({
      name,
      status: 'accepted',
    });
  });

  it.each(cases())('%s: %s, sent in any hostile form, is 422 naming it', async (key, name) => {
    const route = routes().find((r) => `${r.method} ${r.template}` === key)!;
    const parameter = route.parameters[name];
    const variants: Array<[string, string]> = [
      ...hostile(name, parameter.valid),
      ...parameter.wrong.map((wrong): [string, string] => [`the value ${JSON.stringify(wrong.slice(0, 50))}`, `${name}=${encodeURIComponent(wrong)}`]),
    ];
    for (const [what, query] of variants) {
      const reply = await send(route, withCompanion(route, name, query));
      expect({ what, status: reply.status, body: reply.body }).toEqual({ what, status: 422, body: failure('VALIDATION_FAILED', name) });
    }
    for (const edge of parameter.edges ?? []) {
      const reply = await send(route, withCompanion(route, name, `${name}=${encodeURIComponent(edge)}`));
      expect({ edge, status: reply.status < 500 }).toEqual({ edge, status: true });
    }
  });

  it.each(routes().map((r) => [`${r.method} ${r.template}`]))('%s refuses a parameter it does not take, naming it', async (key) => {
    const route = routes().find((r) => `${r.method} ${r.template}` === key)!;
    for (const [query, field] of STRANGERS.filter(([, field]) => !(field in route.parameters))) {
      const reply = await send(route, query);
      expect({ query: query.slice(0, 50), status: reply.status, body: reply.body }).toEqual({
        query: query.slice(0, 50),
        status: 422,
        body: failure('VALIDATION_FAILED', field),
      });
    }
  });

  const withoutQuery = () => operationsOf(backOfficeDocument()).filter((o) => o.template.startsWith('/admin/') && o.query.length === 0);

  it.each(withoutQuery().map((o) => [o.method, o.template]))('%s %s takes no query parameter, and refuses each naming it', async (method, template) => {
    // Path ids that name nothing: the query string is checked before them, and before the body.
    const path = template.replace(/\{[^}]+\}/g, 'none-such');
    for (const [query, field] of STRANGERS) {
      const reply = await call(env.service.url, method, `${path}?${query}`);
      expect({ query: query.slice(0, 50), status: reply.status, body: reply.body }).toEqual({
        query: query.slice(0, 50),
        status: 422,
        body: failure('VALIDATION_FAILED', field),
      });
    }
    // A bare ? is no parameter at all.
    expect((await call(env.service.url, method, `${path}?`)).body).not.toEqual(failure('VALIDATION_FAILED'));
  });

  it.each(operationsOf(merchantApiDocument()).map((o) => [o.method, o.template]))(
    '%s %s refuses any query string with 400 QUERY_NOT_ALLOWED',
    async (method, template) => {
      for (const [query] of STRANGERS) {
        const reply = await call(env.service.url, method, `${template}?${query}`, {}, { token: null });
        expect({ query: query.slice(0, 50), status: reply.status, body: reply.body }).toEqual({
          query: query.slice(0, 50),
          status: 400,
          body: failure('QUERY_NOT_ALLOWED'),
        });
      }
    },
  );

  /** Routes outside /admin/v1 and /api/v2 read nothing from a query string: the probes, metrics, these documents, the console. */
  const outside = () => [
    ...operationsOf(backOfficeDocument())
      .filter((o) => !o.template.startsWith('/admin/'))
      .map((o) => o.template),
    '/console',
    '/console/session',
    '/console/assets/console.css',
    '/favicon.ico',
  ];

  it.each(outside().map((path) => [path]))('GET %s answers a hostile query string as it answers none', async (path) => {
    const plain = await call(env.service.url, 'GET', path, undefined, { token: null });
    for (const [query] of STRANGERS) {
      const reply = await call(env.service.url, 'GET', `${path}?${query}`, undefined, { token: null });
      expect({ query: query.slice(0, 50), status: reply.status }).toEqual({ query: query.slice(0, 50), status: plain.status });
    }
  });
});
