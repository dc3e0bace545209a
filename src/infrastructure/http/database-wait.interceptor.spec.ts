import { CallHandler, ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
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

  /** A handler that fails `failures` times, then answers. */
  function run(method: string, route: keyof Routes, failures: number, options: { waitMs?: number; headersSent?: boolean; failure?: () => Error } = {}) {
    const metrics = new Metrics();
    const interceptor = new DatabaseWaitInterceptor(new DatabaseWait({ databaseWaitMs: options.waitMs ?? 2000 } as AppConfig, metrics), new Reflector());
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

  it('gives the failure back when the database does not answer within the wait, having backed off between runs', async () => {
    const started = Date.now();
    const r = run('GET', 'unmarked', 1_000, { waitMs: 300 });
    await expect(r.answer).rejects.toMatchObject({ code: '57P01' });
    // 50, 100 and 150 ms (what was left) between runs: a handful of runs, not a spin.
    expect(r.calls()).toBeGreaterThanOrEqual(2);
    expect(r.calls()).toBeLessThanOrEqual(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(await r.repeated()).toBe(r.calls() - 1);
  });

  it('backs off between runs during an EventStoreDB outage too, where Postgres answers at once', async () => {
    const noLeader = () => Object.assign(new Error('14 UNAVAILABLE: no connection established'), { code: 14 });
    const r = run('GET', 'unmarked', 1_000, { waitMs: 300, failure: noLeader });
    await expect(r.answer).rejects.toThrow('UNAVAILABLE');
    expect(r.calls()).toBeLessThanOrEqual(5);
  });
});
