import { isDatabaseUnavailable, untilDatabaseAnswers, WaitingPool } from './database-wait';

describe('isDatabaseUnavailable', () => {
  it.each([
    [{ code: '57P01', message: 'terminating connection due to administrator command' }],
    [{ code: '57P03', message: 'the database system is starting up' }],
    [{ code: '53300', message: 'too many connections for database "topup"' }],
    [{ code: '08006', message: 'connection failure' }],
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }],
    [{ code: '55000', message: 'database "topup" is not currently accepting connections' }],
    [{ code: '25006', message: 'cannot execute INSERT in a read-only transaction' }],
    [new Error('Connection terminated unexpectedly')],
    [new Error('Client has encountered a connection error and is not queryable')],
    [new Error('timeout exceeded when trying to connect')],
  ])('%j is an outage', (error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each([
    [{ code: '23505', message: 'duplicate key value violates unique constraint' }],
    [{ code: '22P02', message: 'invalid input syntax for type json' }],
    [{ code: '55000', message: 'cannot execute nextval() in a read-only transaction' }],
    [new TypeError("Cannot read properties of undefined (reading 'x')")],
    [undefined],
    ['Connection terminated'],
  ])('%j is a fault', (error) => expect(isDatabaseUnavailable(error)).toBe(false));
});

describe('untilDatabaseAnswers', () => {
  const outage = new Error('Connection terminated unexpectedly');
  /** A clock that only moves when the wait sleeps, so the schedule is exact. */
  function clock() {
    let now = 0;
    const slept: number[] = [];
    return { slept, now: () => now, sleep: async (ms: number) => void (slept.push(ms), (now += ms)) };
  }

  it('runs the work again while the database does not answer, backing off from 50 ms to 1 s, and returns its result', async () => {
    const c = clock();
    let calls = 0;
    const result = await untilDatabaseAnswers(
      async () => {
        if (++calls < 8) throw outage;
        return 'answered';
      },
      { waitMs: 10_000, ...c },
    );
    expect(result).toBe('answered');
    expect(c.slept).toEqual([50, 100, 200, 400, 800, 1000, 1000]);
  });

  it('gives up with the last failure once the wait after the first failure is over, its last sleep cut to what is left', async () => {
    const c = clock();
    let calls = 0;
    const failures: unknown[] = [];
    const run = untilDatabaseAnswers(
      async () => {
        calls++;
        throw Object.assign(new Error(`terminated ${calls}`), { code: '57P01' });
      },
      { waitMs: 1000, ...c, onWait: (error) => failures.push(error) },
    );
    await expect(run).rejects.toThrow(`terminated 6`);
    expect(c.slept).toEqual([50, 100, 200, 400, 250]);
    expect(failures).toHaveLength(5);
  });

  it('throws a failure that is not an outage at once, and tries once with no wait', async () => {
    const c = clock();
    const fault = Object.assign(new Error('duplicate key'), { code: '23505' });
    await expect(untilDatabaseAnswers(() => Promise.reject(fault), { waitMs: 10_000, ...c })).rejects.toBe(fault);
    await expect(untilDatabaseAnswers(() => Promise.reject(outage), { waitMs: 0, ...c })).rejects.toBe(outage);
    expect(c.slept).toEqual([]);
  });
});

describe('WaitingPool', () => {
  it('waits for a server that refuses connections, then gives up with the refusal after waitMs', async () => {
    // A port nothing listens on: every connection is refused at once.
    const pool = new WaitingPool({ host: '127.0.0.1', port: 9, connectionTimeoutMillis: 200 }, { waitMs: 700, onWait: () => waits++ });
    let waits = 0;
    const started = Date.now();
    await expect(pool.query('select 1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(650);
    expect(waited).toBeLessThan(3000);
    expect(waits).toBeGreaterThanOrEqual(4); // 50, 100, 200, 400 ms, then what is left
    const fails = new WaitingPool({ host: '127.0.0.1', port: 9 }, { waitMs: 0 });
    const once = Date.now();
    await expect(fails.connect()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - once).toBeLessThan(500);
    await Promise.all([pool.end(), fails.end()]);
  });

  it('withoutWaiting: the same pool, whose queries fail at once while the database does not answer', async () => {
    const pool = new WaitingPool({ host: '127.0.0.1', port: 9, connectionTimeoutMillis: 200 }, { waitMs: 5000 });
    const started = Date.now();
    await expect(pool.withoutWaiting().query('select 1')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - started).toBeLessThan(1000);
    await pool.end();
  });
});
