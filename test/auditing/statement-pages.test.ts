import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkStatement } from '../../src/auditing/statement-check/check-statement';
import { STATEMENT_PAGE_SIZE } from '../../src/auditing/wallet-statement';
import { walletStream } from '../../src/ledger/streams';
import { GENESIS_HASH } from '../../src/shared/hash-chain';
import { adminClient, failure, Reply } from '../back-office/admin-client';
import { TestMerchant } from '../support/merchant-fixture';
import { RunningService } from '../support/service';
import { auditedWallet } from '../support/wallet-history';
import { TYPESCRIPT_LOADER } from '../support/service-node-flags';

const ROOT = resolve(__dirname, '../..');

describe('statements: screen-sized pages with a cursor, and a streamed export of the whole', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };
  let statementUrl: string;

  beforeAll(async () => {
    // More than two snapshot intervals (1,000 events each) of mixed movements.
    ({ service, teardown, merchant, admin, auditor } = await auditedWallet(1350, 'SP'));
    statementUrl = `${service.url}/admin/v1/wallets/${merchant.merchantId}/statement`;
  });
  afterAll(async () => teardown());

  const get = (url: string) => fetch(url, { headers: { authorization: `Bearer ${auditor.token}` } });

  async function exported(format: 'json' | 'csv', query = '') {
    const response = await get(`${statementUrl}/export?format=${format}${query}`);
    expect(response.status).toBe(200);
    return { response, text: await response.text() };
  }

  /** Every page from the first, following the cursor. */
  async function walkJson(query = '') {
    const pages: any[] = [];
    for (let after: number | null = null; ;) {
      const page: Reply = await admin(
        'GET',
        `/admin/v1/wallets/${merchant.merchantId}/statement?${query}${after === null ? '' : `&after_revision=${after}`}`,
        undefined,
        auditor,
      );
      expect(page.status).toBe(200);
      pages.push(page.body.data);
      after = page.body.data.next_after_revision;
      if (after === null) return pages;
    }
  }

  it('the first page is 100 lines from the wallet opening, with the cursor to the next page', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(events.length).toBeGreaterThan(2100);
    const page = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement`, undefined, auditor);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ success: true, code: 'OK', data: { merchant_id: merchant.merchantId, currency: 'USD' } });
    expect(STATEMENT_PAGE_SIZE).toBe(100);
    expect(page.body.data.lines.map((l: { revision: number }) => l.revision)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(page.body.data.lines[0].prev_hash).toBe(GENESIS_HASH);
    expect(page.body.data.next_after_revision).toBe(99);
    expect(page.headers.get('x-next-after-revision')).toBe('99');
  });

  it('walking the cursor gives the export, line for line, across the snapshots; the export checks out offline', async () => {
    const { response, text } = await exported('json');
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-disposition')).toContain(`statement-${merchant.merchantId}.json`);
    const whole = JSON.parse(text);
    expect(whole).toMatchObject({ merchant_id: merchant.merchantId, currency: 'USD', next_after_revision: null });
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(whole.lines.map((l: { revision: number }) => l.revision)).toEqual(events.map((e) => Number(e.revision)));

    const pages = await walkJson();
    expect(pages.length).toBe(Math.ceil(events.length / 100));
    expect(pages.slice(0, -1).every((p) => p.lines.length === 100)).toBe(true);
    expect(pages.flatMap((p) => p.lines)).toEqual(whole.lines);

    expect(checkStatement(text)).toMatchObject({ ok: true, lines: events.length, anchor: { kind: 'genesis' }, problems: [] });
    // And with the command-line checker, as an auditor would run it.
    const dir = mkdtempSync(join(tmpdir(), 'topup-export-'));
    try {
      const file = join(dir, 'statement.json');
      writeFileSync(file, text);
      const run = spawnSync(process.execPath, [...TYPESCRIPT_LOADER, 'src/auditing/verify-statement.cli.ts', file], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`OK: ${events.length} lines, revisions 0..${events.length - 1}, chain intact`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('pages that start at, just before and just after a snapshot equal those lines of the export', async () => {
    const whole = JSON.parse((await exported('json')).text).lines;
    for (const after of [997, 998, 999, 1000, 1998, 1999, 2000]) {
      const page = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?after_revision=${after}&limit=3`, undefined, auditor);
      expect({ after, lines: page.body.data.lines }).toEqual({ after, lines: whole.slice(after + 1, after + 4) });
      expect(page.body.data.next_after_revision).toBe(after + 3);
    }
  });

  it('CSV pages follow X-Next-After-Revision and add up to the CSV export, which checks out offline', async () => {
    const { response, text: csv } = await exported('csv');
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(checkStatement(csv)).toMatchObject({ ok: true, problems: [] });
    const [header, ...rows] = csv.trimEnd().split('\r\n');

    const paged: string[] = [];
    for (let after: string | null = null; ;) {
      const page = await get(`${statementUrl}?format=csv&limit=250${after === null ? '' : `&after_revision=${after}`}`);
      expect(page.status).toBe(200);
      const [pageHeader, ...pageRows] = (await page.text()).trimEnd().split('\r\n');
      expect(pageHeader).toBe(header);
      paged.push(...pageRows);
      after = page.headers.get('x-next-after-revision');
      if (after === null) break;
      expect(pageRows).toHaveLength(250);
    }
    expect(paged).toEqual(rows);
    // A page is checked from its first line's link; the first page from the genesis hash.
    const second = await (await get(`${statementUrl}?format=csv&limit=250&after_revision=249`)).text();
    expect(checkStatement(second)).toMatchObject({ ok: true, lines: 250, anchor: { kind: 'prev_hash', revision: 250 } });
  });

  it('a time window pages and exports the same lines', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    const from = events[500].createdAt;
    const to = events[1700].createdAt;
    const window = `&from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`;
    const expected = events.filter((e) => e.createdAt >= from && e.createdAt < to).map((e) => Number(e.revision));
    const exportedLines = JSON.parse((await exported('json', window)).text).lines;
    expect(exportedLines.map((l: { revision: number }) => l.revision)).toEqual(expected);
    const pages = await walkJson(`limit=300${window}`);
    expect(pages.flatMap((p) => p.lines)).toEqual(exportedLines);
  });

  it('refuses bad paging and export parameters in the envelope, and unknown wallets with 404', async () => {
    const path = `/admin/v1/wallets/${merchant.merchantId}/statement`;
    const cases: [string, string][] = [
      [`${path}?limit=0`, 'limit'],
      [`${path}?limit=100001`, 'limit'],
      [`${path}?limit=ten`, 'limit'],
      [`${path}?limit=1&limit=2`, 'limit'],
      [`${path}?after_revision=-1`, 'after_revision'],
      [`${path}?format=xml`, 'format'],
      [`${path}/export?format=pdf`, 'format'],
      [`${path}/export?from=yesterday`, 'from'],
    ];
    for (const [url, field] of cases) {
      const reply = await admin('GET', url, undefined, auditor);
      expect({ url, status: reply.status, body: reply.body }).toEqual({ url, status: 422, body: failure('VALIDATION_FAILED', field) });
    }
    for (const url of ['/admin/v1/wallets/mch_nobody/statement', '/admin/v1/wallets/mch_nobody/statement/export?format=csv']) {
      const reply = await admin('GET', url, undefined, auditor);
      expect({ url, status: reply.status, body: reply.body }).toEqual({ url, status: 404, body: failure('WALLET_NOT_FOUND') });
    }
    const reconciler = await admin.createStaff('reconciler');
    expect((await admin('GET', `${path}/export`, undefined, { token: reconciler.token })).status).toBe(403);
  });

  it('an export abandoned by its client mid-way leaves the service answering', async () => {
    const controller = new AbortController();
    const response = await fetch(`${statementUrl}/export?format=csv`, { headers: { authorization: `Bearer ${auditor.token}` }, signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.closed.catch(() => undefined);
    const page = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?limit=1`, undefined, auditor);
    expect(page.body.data.lines).toHaveLength(1);
  });
});
