import { ApiError } from '../../infrastructure/http/api-error';
import { readQueryString } from '../http/query-string';
import { DASHBOARD_QUERY, windowSlots } from './dashboard-window';

describe('the dashboard query', () => {
  it.each([
    ['', undefined],
    ['window=1h', '1h'],
    ['window=24h', '24h'],
  ])('%j is the window %s', (search, window) => {
    expect(readQueryString(search, DASHBOARD_QUERY).window).toBe(window);
  });

  it.each([
    ['another value', 'window=7d', 'window'],
    ['an empty value', 'window=', 'window'],
    ['another case', 'window=1H', 'window'],
    ['the parameter twice', 'window=1h&window=24h', 'window'],
    ['a nested parameter', 'window[a]=1h', 'window'],
    ['an unknown parameter', 'windw=1h', 'windw'],
    ['a list parameter', 'limit=10', 'limit'],
  ])('refuses %s with 422 VALIDATION_FAILED naming it', (_name, search, field) => {
    let error: unknown;
    try {
      readQueryString(search, DASHBOARD_QUERY);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 422, code: 'VALIDATION_FAILED', field, message: expect.stringContaining(field) });
  });
});

describe('windowSlots', () => {
  const now = new Date('2026-11-22T10:37:42.123Z');

  it('1h: 60 minutes, the last the one now is in', () => {
    const slots = windowSlots('1h', now);
    expect(slots.stepSeconds).toBe(60);
    expect(slots.starts).toHaveLength(60);
    expect(slots.starts[59].toISOString()).toBe('2026-11-22T10:37:00.000Z');
    expect(slots.from.toISOString()).toBe('2026-11-22T09:38:00.000Z');
    expect(slots.to.toISOString()).toBe('2026-11-22T10:38:00.000Z');
  });

  it('24h: 96 quarter hours, aligned on the hour', () => {
    const slots = windowSlots('24h', now);
    expect(slots.stepSeconds).toBe(900);
    expect(slots.starts).toHaveLength(96);
    expect(slots.starts[95].toISOString()).toBe('2026-11-22T10:30:00.000Z');
    expect(slots.from.toISOString()).toBe('2026-11-21T10:45:00.000Z');
    expect(slots.to.toISOString()).toBe('2026-11-22T10:45:00.000Z');
    expect(slots.starts.every((start, i) => i === 0 || start.getTime() - slots.starts[i - 1].getTime() === 900_000)).toBe(true);
  });
});
