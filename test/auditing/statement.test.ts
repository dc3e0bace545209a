import { formatPosition } from '../../src/ledger/ports/event-store.port';
import { walletStream } from '../../src/ledger/streams';
import { checkStatement } from '../../src/auditing/statement-check/check-statement';
import { chainHash, GENESIS_HASH } from '../../src/shared/hash-chain';
import { adminClient } from '../back-office/admin-client';
import { signedFetch, TestMerchant } from '../support/merchant-fixture';
import { RunningService } from '../support/service';
import { handFold } from '../support/expectations';
import { auditedWallet } from '../support/wallet-history';

describe('auditors: statements and balances as of any instant, replayed from the events', () => {
  let service: RunningService;
  let teardown: () => Promise<void>;
  let merchant: TestMerchant;
  let admin: ReturnType<typeof adminClient>;
  let auditor: { token: string };

  beforeAll(async () => {
    // Thousands of mixed movements: freezes, deductions, releases and deposits.
    ({ service, teardown, merchant, admin, auditor } = await auditedWallet(1200, 'ST'));
  });
  afterAll(async () => teardown());

  async function wholeStatement() {
    const lines: any[] = [];
    let after: number | null = -1;
    while (after !== null) {
      const query: string = after >= 0 ? `&after_revision=${after}` : '';
      const page = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?limit=1000${query}`, undefined, auditor);
      expect(page.status).toBe(200);
      lines.push(...page.body.data.lines);
      after = page.body.data.next_after_revision;
    }
    return lines;
  }

  it('the statement replays every movement; its last line equals the balance endpoint', async () => {
    const lines = await wholeStatement();
    expect(lines.length).toBeGreaterThan(2000);
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(lines.map((l) => l.revision)).toEqual(events.map((e) => Number(e.revision)));
    const last = lines[lines.length - 1];
    const balance = (await signedFetch(service, merchant, { path: '/api/v2/balance' })).body.data;
    expect({ balance: last.balance_after, frozen_balance: last.frozen_after, available_balance: last.available_after }).toEqual({
      balance: balance.balance,
      frozen_balance: balance.frozen_balance,
      available_balance: balance.available_balance,
    });
    expect(handFold(events)).toEqual({ balance: balance.balance, frozen_balance: balance.frozen_balance, available_balance: balance.available_balance });
  });

  it('every line links to the one before in the hash chain', async () => {
    const lines = await wholeStatement();
    expect(lines[0].prev_hash).toBe(GENESIS_HASH);
    lines.forEach((line, i) => {
      if (i > 0) expect(line.prev_hash).toBe(lines[i - 1].hash);
      expect(chainHash(line.prev_hash, line.revision, line.type, line.data)).toBe(line.hash);
    });
    // The chain is stored with the events, not computed for the export.
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    expect(events.every((e, i) => e.metadata.hash === lines[i].hash)).toBe(true);
  });

  it('balance as of past instants and positions equals a hand fold of the events up to there', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    for (const fraction of [0.05, 0.3, 0.5, 0.77, 1]) {
      const k = Math.min(events.length - 1, Math.floor(events.length * fraction));
      const byPosition = await admin(
        'GET',
        `/admin/v1/wallets/${merchant.merchantId}/balance?position=${formatPosition(events[k].position)}`,
        undefined,
        auditor,
      );
      expect(byPosition.body.data).toMatchObject({ ...handFold(events.slice(0, k + 1)), events_applied: k + 1, last_revision: k });
      const at = events[k].createdAt;
      const upToInstant = events.filter((e) => e.createdAt <= at);
      const byInstant = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/balance?at=${encodeURIComponent(at.toISOString())}`, undefined, auditor);
      expect(byInstant.body.data).toMatchObject({ ...handFold(upToInstant), events_applied: upToInstant.length });
    }
    const before = await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/balance?at=2000-01-01T00:00:00Z`, undefined, auditor);
    expect(before.body.data).toMatchObject({ balance: '0.00', events_applied: 0 });
  });

  it('filters by time, exports CSV, and refuses bad parameters and other roles', async () => {
    const events = await service.store.readStream(walletStream(merchant.merchantId));
    const from = events[100].createdAt;
    const to = events[events.length - 100].createdAt;
    const window = await admin(
      'GET',
      `/admin/v1/wallets/${merchant.merchantId}/statement?limit=100000&from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`,
      undefined,
      auditor,
    );
    const expected = events.filter((e) => e.createdAt >= from && e.createdAt < to).map((e) => Number(e.revision));
    expect(window.body.data.lines.map((l: { revision: number }) => l.revision)).toEqual(expected);

    const csv = await fetch(`${service.url}/admin/v1/wallets/${merchant.merchantId}/statement?format=csv&limit=100000`, {
      headers: { authorization: `Bearer ${auditor.token}` },
    });
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows[0]).toBe(
      'revision,position,recorded_at,occurred_at,type,order_no,reference,reason,amount,balance_after,frozen_after,available_after,data,prev_hash,hash',
    );
    expect(rows).toHaveLength(events.length + 1);

    const reconciler = await admin.createStaff('reconciler');
    expect((await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement`, undefined, { token: reconciler.token })).status).toBe(403);
    expect((await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/statement?from=yesterday`, undefined, auditor)).body).toMatchObject({
      code: 'VALIDATION_FAILED',
      field: 'from',
    });
    expect((await admin('GET', `/admin/v1/wallets/${merchant.merchantId}/balance?at=2000-01-01T00:00:00Z&position=1/1`, undefined, auditor)).status).toBe(422);
    expect((await admin('GET', '/admin/v1/wallets/mch_nobody/statement', undefined, auditor)).body).toMatchObject({ code: 'WALLET_NOT_FOUND' });
  });

  it('an export from the service checks out offline, and the checker pinpoints tampering in it', async () => {
    const csv = await (
      await fetch(`${service.url}/admin/v1/wallets/${merchant.merchantId}/statement?format=csv&limit=100000`, {
        headers: { authorization: `Bearer ${auditor.token}` },
      })
    ).text();
    const clean = checkStatement(csv);
    expect(clean).toMatchObject({ ok: true, problems: [] });
    const rows = csv.trimEnd().split('\r\n');
    expect(clean.lines).toBe(rows.length - 1);
    const first = (report: ReturnType<typeof checkStatement>) => report.problems[0] && { line: report.problems[0].line, kind: report.problems[0].kind };

    // One altered amount: a deposit line's amount column.
    const k = rows.findIndex((r, i) => i > 500 && r.includes(',FundsDeposited,'));
    const altered = [...rows];
    altered[k] = altered[k].replace(/,50\.00,/, ',500.00,');
    expect(altered[k]).not.toBe(rows[k]);
    expect(first(checkStatement(altered.join('\r\n')))).toEqual({ line: k + 1, kind: 'ALTERED' });

    // One deleted line.
    const deleted = [...rows.slice(0, 700), ...rows.slice(701)];
    expect(first(checkStatement(deleted.join('\r\n')))).toEqual({ line: 701, kind: 'MISSING' });

    // One swapped pair.
    const swapped = [...rows];
    [swapped[900], swapped[901]] = [swapped[901], swapped[900]];
    expect(first(checkStatement(swapped.join('\r\n')))).toEqual({ line: 901, kind: 'REORDERED' });
  });
});
