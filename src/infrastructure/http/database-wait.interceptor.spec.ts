import { CallHandler, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Pool } from 'pg';
import { defer, lastValueFrom } from 'rxjs';
import { AppConfig } from '../../config/config';
import { Metrics } from '../metrics/metrics';
import { DatabaseWait, DatabaseWaitInterceptor, SafeToRepeat } from './database-wait.interceptor';

class Routes {
  @SafeToRepeat()
  marked() {}
  unmarked() {}
}

describe('DatabaseWaitInterceptor', () => {
  const dropped = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

  /** A handler that fails `failures` times, then answers; `probe` is what the database answers to the wait's `select 1`. */
  function run(
    method: string,
    route: keyof Routes,
    failures: number,
    options: { waitMs?: number; headersSent?: boolean; probe?: () => Promise<unknown>; failure?: () => Error } = {},
  ) {
    const metrics = new Metrics();
    const pool = { query: options.probe ?? (() => Promise.resolve({ rows: [] })) } as unknown as Pool;
    const interceptor = new DatabaseWaitInterceptor(new DatabaseWait({ databaseWaitMs: options.waitMs ?? 2000 } as AppConfig, pool, metrics), new Reflector());
    const context = {
      getType: () => 'http',
      getHandler: () => Routes.prototype[route],
      getClass: () => Routes,
      switchToHttp: () => ({ getRequest: () => ({ method }), getResponse: () => ({ headersSent: options.headersSent ?? false }) }),
    } as unknown as ExecutionContext;
    let calls = 0;
    const handler: CallHandler = {
      handle: () =>
        defer(async () => {
          calls++;
          if (calls <= failures) throw (options.failure ?? dropped)();
          return 'answer';
        }),
    };
    const answer = lastValueFrom(interceptor.intercept(context, handler));
    return {
      answer,
      calls: () => calls,
      repeated: async () => (await metrics.databaseWaits.get()).values.find((v) => v.labels.kind === 'request')?.value ?? 0,
    };
  }

  it('runs a read again after its connection dropped, once the database answers', async () => {
    const r = run('GET', 'unmarked', 2);
    await expect(r.answer).resolves.toBe('answer');
    expect(r.calls()).toBe(3);
    expect(await r.repeated()).toBe(2);
  });

  it('runs a write marked SafeToRepeat again, and never one that is not marked', async () => {
    const marked = run('POST', 'marked', 1);
    await expect(marked.answer).resolves.toBe('answer');
    expect(marked.calls()).toBe(2);
    const unmarked = run('POST', 'unmarked', 1);
    await expect(unmarked.answer).rejects.toMatchObject({ code: '57P01' });
    expect(unmarked.calls()).toBe(1);
  });

  it('never runs again an answer already under way, a fault that is not an outage, or with the wait off', async () => {
    const streaming = run('GET', 'unmarked', 1, { headersSent: true });
    await expect(streaming.answer).rejects.toMatchObject({ code: '57P01' });
    expect(streaming.calls()).toBe(1);
    const fault = run('GET', 'unmarked', 1, { failure: () => Object.assign(new Error('duplicate key value'), { code: '23505' }) });
    await expect(fault.answer).rejects.toMatchObject({ code: '23505' });
    expect(fault.calls()).toBe(1);
    const off = run('GET', 'unmarked', 1, { waitMs: 0 });
    await expect(off.answer).rejects.toMatchObject({ code: '57P01' });
    expect(off.calls()).toBe(1);
  });

  it('gives the original failure back when the database does not answer within the wait', async () => {
    const probeFailure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const r = run('GET', 'unmarked', 5, { waitMs: 300, probe: () => Promise.reject(probeFailure) });
    await expect(r.answer).rejects.toMatchObject({ code: '57P01' });
    expect(r.calls()).toBe(1);
  });
});
