import { ChildService, spawnService } from '../support/child-service';
import { rawExchange } from '../support/raw-http';
import { TEST_ENV } from '../support/service';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const UPLOADS = 50;

/**
 * Clients that declare a body, send part of it and go away. That is the
 * client's business, not a fault of the service: no ERROR, no stack trace, one
 * summary line for the operator, and the service carries on.
 */
describe('aborted uploads', () => {
  let db: TestDatabase;
  let child: ChildService;

  beforeAll(async () => {
    db = await createTestDatabase();
    child = await spawnService(db);
  });
  afterAll(async () => {
    if (child.process.exitCode === null) await child.kill('SIGKILL');
    await db.drop();
  });

  /** Headers declaring 1000 bytes, 100 of them, then the socket is destroyed once the service is reading the body. */
  const abortedUpload = (head: string) =>
    rawExchange(child.url, `${head}Content-Length: 1000\r\n\r\n{"out_trade_no":"${'x'.repeat(80)}`, {
      onWritten: (socket) => setTimeout(() => socket.destroy(), 50),
    });

  it(`${UPLOADS} to the merchant API and ${UPLOADS} to the back office log no error and no stack`, async () => {
    await Promise.all([
      ...Array.from({ length: UPLOADS }, () => abortedUpload('POST /api/v2/topup/submit HTTP/1.1\r\nHost: x\r\n')),
      ...Array.from({ length: UPLOADS }, () =>
        abortedUpload(`POST /admin/v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TEST_ENV.ADMIN_TOKEN}\r\n`),
      ),
    ]);
    // Give the service time to notice every close and to log whatever it would.
    await new Promise((r) => setTimeout(r, 1000));

    expect((await fetch(`${child.url}/health`)).status).toBe(200);
    const created = await fetch(`${child.url}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ENV.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'After the aborts' }),
    });
    expect(created.status).toBe(201);

    const lines = child.output().split('\n');
    expect(lines.filter((line) => /\bERROR\b/.test(line))).toEqual([]);
    expect(lines.filter((line) => /^\s+at /.test(line))).toEqual([]);
  });

  it('sums them up in one line when the service stops', async () => {
    await child.kill('SIGTERM');
    const summaries = child.output().match(/client errors .*/g) ?? [];
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatch(new RegExp(`\\b${2 * UPLOADS} abandoned\\b`));
  });
});
