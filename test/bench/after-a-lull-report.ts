/** What `npm run bench:lull` prints: each setting's first second of submits after a lull. */
import { percentile } from './load-generator';
import { Spread, table } from './tables';

/** One burst of submits after a lull. */
export interface Burst {
  /** Every submit's latency, ascending, in ms. */
  latenciesMs: Float64Array;
  /** Replies that were not 2xx, failed connections and timeouts. */
  failures: number;
  /** Connections the service opened to its database during the burst (and its settling), still open after it. */
  newConnections: number;
}

export interface SettingBursts {
  setting: string;
  bursts: Burst[];
}

/** One row per setting: the median over its bursts (lowest–highest) of each burst's p50, p99, longest submit and new connections. */
export function lullTable(settings: readonly SettingBursts[]): string[] {
  const over = (bursts: Burst[], figure: (burst: Burst) => number) => new Spread(bursts.map(figure));
  return table(
    ['setting', 'bursts', 'p50 ms', 'p99 ms', 'longest ms', 'connections opened', 'non-2xx'],
    settings.map(({ setting, bursts }) => [
      setting,
      String(bursts.length),
      over(bursts, (b) => percentile(b.latenciesMs, 50)).show(1),
      over(bursts, (b) => percentile(b.latenciesMs, 99)).show(1),
      over(bursts, (b) => b.latenciesMs[b.latenciesMs.length - 1] ?? Number.NaN).show(1),
      over(bursts, (b) => b.newConnections).show(0),
      String(bursts.reduce((n, b) => n + b.failures, 0)),
    ]),
  );
}
