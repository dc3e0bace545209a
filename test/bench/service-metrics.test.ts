import { parseSamples } from '../support/prometheus-text';
import { serverSide, slotsHeld } from './service-metrics';

const scrape = (submitCount: number, submitSum: number, refusedCount: number, refusedSum: number, appendCount: number, appendSum: number) =>
  parseSamples(
    [
      '# HELP http_request_duration_seconds From a request arriving to its reply sent',
      '# TYPE http_request_duration_seconds histogram',
      `http_request_duration_seconds_bucket{le="0.025",method="POST",route="/api/v2/topup/submit",status="202"} ${submitCount / 2}`,
      `http_request_duration_seconds_bucket{le="0.05",method="POST",route="/api/v2/topup/submit",status="202"} ${submitCount * 0.9}`,
      `http_request_duration_seconds_bucket{le="0.1",method="POST",route="/api/v2/topup/submit",status="202"} ${submitCount}`,
      `http_request_duration_seconds_bucket{le="0.1",method="POST",route="/api/v2/topup/submit",status="402"} ${refusedCount}`,
      `http_request_duration_seconds_bucket{le="0.1",method="GET",route="/metrics",status="200"} ${submitCount}`,
      `http_request_duration_seconds_sum{method="POST",route="/api/v2/topup/submit",status="202"} ${submitSum}`,
      `http_request_duration_seconds_count{method="POST",route="/api/v2/topup/submit",status="202"} ${submitCount}`,
      `http_request_duration_seconds_sum{method="POST",route="/api/v2/topup/submit",status="402"} ${refusedSum}`,
      `http_request_duration_seconds_count{method="POST",route="/api/v2/topup/submit",status="402"} ${refusedCount}`,
      // Another route, busy meanwhile: none of its requests is a submit.
      `http_request_duration_seconds_sum{method="GET",route="/metrics",status="200"} ${submitSum * 7}`,
      `http_request_duration_seconds_count{method="GET",route="/metrics",status="200"} ${submitCount * 3}`,
      `event_store_append_duration_seconds_sum ${appendSum}`,
      `event_store_append_duration_seconds_count ${appendCount}`,
      '',
    ].join('\n'),
  );

describe('npm run bench: what the service said about a load', () => {
  it("reads the service's text format with the project's parser: series with their labels, values as numbers, comments left out, junk refused", () => {
    const samples = scrape(10, 0.5, 0, 0, 4, 0.04);
    expect(samples.get('event_store_append_duration_seconds_count')).toBe(4);
    expect(samples.get('http_request_duration_seconds_sum{method="POST",route="/api/v2/topup/submit",status="202"}')).toBe(0.5);
    expect([...samples.keys()].some((key) => key.startsWith('#') || key.startsWith('not'))).toBe(false);
    expect(() => parseSamples('not a sample')).toThrow('not a sample line');
  });

  it("takes the submits' and the appends' mean times over the load alone, every status of the submit route and no other route", () => {
    const before = scrape(100, 2, 10, 0.5, 300, 3);
    // During the load: 200 accepted in 7.5 s and 20 refused in 1.3 s, 40 ms each on average; 600 appends in 12 s.
    const after = scrape(300, 9.5, 30, 1.8, 900, 15);
    const figures = serverSide(before, after)!;
    expect(figures.submits).toBe(220);
    expect(figures.submitMs).toBeCloseTo(40, 6);
    expect(figures.appendMs).toBeCloseTo(20, 6);
    // Of the 220: 100 accepted within 25 ms, 180 within 50 ms, and all 200 accepted and 20 refused within 100 ms.
    expect(figures.submitsOver.map(({ ms, share }) => [ms, Number(share.toFixed(6))])).toEqual([
      [25, Number((120 / 220).toFixed(6))],
      [50, Number((40 / 220).toFixed(6))],
      [100, 0],
    ]);
  });

  it('has nothing to say of a load in which no submit was answered', () => {
    const same = scrape(100, 2, 0, 0, 300, 3);
    expect(serverSide(same, same)).toBeUndefined();
  });
});

describe("npm run bench: the service's upstream slots over a window", () => {
  const slots = (seconds: number) =>
    parseSamples(['# TYPE topup_fulfilment_slots gauge', 'topup_fulfilment_slots 256', `topup_fulfilment_slot_seconds_total ${seconds}`, ''].join('\n'));

  it('the slot-seconds the window added, over its length, of the configured slots', () => {
    // 2,400 slot-seconds over 10 s: 240 of the 256 held on average.
    expect(slotsHeld(slots(100), slots(2500), 10_000)).toEqual({ busy: 240, of: 256 });
  });

  it('none held: zero, whatever the counter held before the window', () => {
    expect(slotsHeld(slots(73.5), slots(73.5), 15_000)).toEqual({ busy: 0, of: 256 });
  });
});
