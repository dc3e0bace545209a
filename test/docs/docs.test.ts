import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { adminClient } from '../back-office/admin-client';
import { ChildService, freePort, spawnService } from '../support/child-service';
import { TEST_ENV } from '../support/service';
import { describeEachStore } from '../support/event-stores';
import { TestDatabase } from '../support/test-database';
import { DocBlock, extractBlocks } from './doc-blocks';
import { BlockOutcome, DocRunner } from './doc-runner';

const ROOT = resolve(__dirname, '../..');

/**
 * The order the documents run in: the quick start first, on a service with
 * nothing in it; merchant-client.md before the documents whose TypeScript runs
 * in the app it sets up. Documents not named here run after these.
 */
const FIRST = [
  'docs/quick-start.md',
  'README.md',
  'docs/merchant-client.md',
  'docs/signing.md',
  'docs/callbacks.md',
  'docs/merchant-api.md',
  'docs/back-office-api.md',
  'docs/auditors-guide.md',
];

/** Documents that must have examples that run; a block skipped in them is listed like any other. */
const RUN = [
  'README.md',
  'docs/quick-start.md',
  'docs/signing.md',
  'docs/merchant-client.md',
  'docs/callbacks.md',
  'docs/back-office-api.md',
  'docs/auditors-guide.md',
  'docs/reconciliation.md',
];

/** What the quick start tells the reader to start the sandbox with; the service here runs with the same. */
const SANDBOX_SETTINGS = { CALLBACK_ALLOW_PRIVATE_NETWORKS: 'true', UPSTREAM_TIMEOUT_MS: '2000' };

const documents = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));

function rank(doc: string): number {
  const i = FIRST.indexOf(doc);
  return i < 0 ? FIRST.length : i;
}

const blocksOf = new Map<string, DocBlock[]>(documents.map((doc) => [doc, extractBlocks(doc, readFileSync(join(ROOT, doc), 'utf8'))]));

describeEachStore('the documentation: every shell and TypeScript example, run as written against the service', (store) => {
  let db: TestDatabase;
  let service: ChildService;
  let runner: DocRunner;
  let base: Record<string, string>;
  let sandbox: Record<string, string> | undefined;
  const outcomes: BlockOutcome[] = [];

  beforeAll(async () => {
    db = await store.createDatabase('topup_doctest');
    // docs/back-office-api.md shows the four-eyes rule on this threshold; every other example moves less.
    service = await spawnService(db, { ...SANDBOX_SETTINGS, FULFILMENT_CONCURRENCY: '16', CALLBACK_CONCURRENCY: '32', NO_COLOR: '1', APPROVAL_THRESHOLD: '1000.00' });
    runner = new DocRunner(ROOT);
    const { NODE_ENV, ...env } = process.env as Record<string, string>;
    base = { ...env, ...db.env, BASE_URL: service.url, ADMIN_TOKEN: TEST_ENV.ADMIN_TOKEN, TS_NODE_TRANSPILE_ONLY: 'true' };
  });

  afterAll(async () => {
    runner?.cleanUp();
    await service?.kill('SIGTERM');
    await db?.drop();
    if (outcomes.length > 0) console.log(summary(outcomes));
  });

  it('the quick start starts its sandbox with the settings the service here runs with', () => {
    const start = blocksOf.get('docs/quick-start.md')!.find((b) => b.directive?.kind === 'skip' && b.code.includes('npm start'));
    for (const [name, value] of Object.entries(SANDBOX_SETTINGS)) expect(start?.code).toContain(`${name}=${value}`);
  });

  for (const doc of documents) {
    const blocks = blocksOf.get(doc)!;
    const test = blocks.length === 0 ? it.skip : it;
    test(`${doc}: ${blocks.length} example${blocks.length === 1 ? '' : 's'}`, async () => {
      const env = doc === 'docs/quick-start.md' ? { ...base, TOPUP_CALLBACK_URL: await callbackUrl() } : { ...base, ...(await sandboxMerchant()) };
      const ran = await runner.runDocument(blocks, env).catch((error: Error) => {
        error.message += `\n--- the service's last log lines ---\n${service.output().split('\n').slice(-30).join('\n')}`;
        throw error;
      });
      outcomes.push(...ran);
      if (RUN.includes(doc)) expect(ran.filter((o) => o.result === 'ran').length).toBeGreaterThan(0);
    }, 180_000);
  }

  it('every TypeScript example type-checks with the tsconfig.json of the app the documents put it in', async () => {
    expect(await runner.typeCheck()).toBeGreaterThan(0);
  }, 120_000);

  /**
   * A merchant for the documents after the quick start, as an operator would
   * hand it out: funded, with the SKU the examples order (mlbb-86, which needs
   * a server_id), and a callback URL on this machine.
   */
  async function sandboxMerchant(): Promise<Record<string, string>> {
    if (sandbox) return sandbox;
    const admin = adminClient(service.url);
    const callback = await callbackUrl();
    const merchant = await admin.createMerchant({ name: 'Sandbox merchant', callback_url: callback });
    const calls = [
      await admin('PUT', '/admin/v1/products/mlbb', { name: 'Mobile Legends' }),
      await admin('PUT', '/admin/v1/skus/mlbb-86', { product_id: 'mlbb', name: '86 Diamonds', required_account_fields: ['server_id'], supports_account_check: true, on_shelf: true }),
      await admin('PUT', `/admin/v1/merchants/${merchant.merchant_id}/prices/mlbb-86`, { price: '1.20' }),
      await admin('POST', `/admin/v1/merchants/${merchant.merchant_id}/deposits`, { amount: '100.00', reference: 'sandbox' }),
    ];
    expect(calls.map((c) => c.status)).toEqual([200, 200, 200, 201]);
    sandbox = {
      MERCHANT_ID: merchant.merchant_id,
      TOPUP_BASE_URL: service.url,
      TOPUP_API_KEY: merchant.api_key,
      TOPUP_APP_SECRET: merchant.app_secret,
      TOPUP_CALLBACK_URL: callback,
    };
    return sandbox;
  }
});

async function callbackUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}/topup/callback`;
}

function summary(outcomes: BlockOutcome[]): string {
  const count = (result: BlockOutcome['result'], language?: string) =>
    outcomes.filter((o) => o.result === result && (!language || o.block.language === language)).length;
  const skipped = outcomes.filter((o) => o.result === 'skipped').map((o) => `  ${o.block.doc}:${o.block.line}: ${(o.block.directive as { reason: string }).reason}`);
  return [
    `Documentation examples: ${outcomes.length} blocks in ${new Set(outcomes.map((o) => o.block.doc)).size} documents. ` +
      `Ran ${count('ran')} (${count('ran', 'shell')} shell, ${count('ran', 'typescript')} TypeScript), ` +
      `saved ${count('saved')} TypeScript files that the examples run or import, skipped ${skipped.length}:`,
    ...skipped,
  ].join('\n');
}

describe('reading the examples out of Markdown', () => {
  const markdown = [
    '# Doc', //                                          1
    '```sh', //                                          2
    'echo one', //                                       3
    '```', //                                            4
    '```json', //                                        5
    '{"not": "run"}', //                                 6
    '```', //                                            7
    '<!-- doc-test: skip needs Docker -->', //           8
    '```bash', //                                        9
    'docker compose up', //                             10
    '```', //                                           11
    '1. In a list:', //                                 12
    '   <!-- doc-test: file src/a.ts -->', //           13
    '   ```ts', //                                      14
    '   export const a = 1;', //                        15
    '   ```', //                                        16
  ].join('\n');

  it('takes shell and TypeScript blocks with their line, language, code and directive, and nothing else', () => {
    expect(extractBlocks('doc.md', markdown)).toEqual([
      { doc: 'doc.md', line: 2, language: 'shell', code: 'echo one\n', directive: undefined },
      { doc: 'doc.md', line: 9, language: 'shell', code: 'docker compose up\n', directive: { kind: 'skip', reason: 'needs Docker' } },
      { doc: 'doc.md', line: 14, language: 'typescript', code: 'export const a = 1;\n', directive: { kind: 'file', path: 'src/a.ts' } },
    ]);
  });

  it.each([
    ['a skip without a reason', '<!-- doc-test: skip -->\n```sh\ntrue\n```', /doc\.md:1: unknown doc-test comment "skip"/],
    ['an unknown directive', '<!-- doc-test: run later -->\n```sh\ntrue\n```', /doc\.md:1: unknown doc-test comment/],
    ['a file outside the workspace', '<!-- doc-test: file ../x.ts -->\n```ts\n```', /doc\.md:1: unknown doc-test comment/],
    ['a directive before prose', '<!-- doc-test: skip x -->\ntext\n```sh\ntrue\n```', /doc\.md:1: a doc-test comment must come right before a code block/],
    ['a directive on a JSON block', '<!-- doc-test: skip x -->\n```json\n{}\n```', /doc\.md:1: a doc-test comment on a block that is neither shell nor TypeScript/],
    ['a block never closed', '```sh\ntrue\n', /doc\.md:1: a code block that is never closed/],
  ])('refuses %s, naming the line', (_name, text, error) => {
    expect(() => extractBlocks('doc.md', text)).toThrow(error);
  });
});
