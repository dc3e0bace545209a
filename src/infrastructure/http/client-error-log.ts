import { Logger } from '@nestjs/common';
import { Metrics } from '../metrics/metrics';

export type ClientErrorKind = 'abandoned mid-request' | 'malformed' | 'headers too large' | 'timed out';

/**
 * Counts what clients get wrong at the HTTP level and says it in one log line
 * at most once per interval. These are not faults of the service, and a flood
 * of them (slow or vanishing clients) must not flood the log.
 */
export class ClientErrorLog {
  private readonly counts = new Map<ClientErrorKind, number>();
  private windowStart = 0;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly intervalMs = 60_000,
    private readonly logger = new Logger('Http'),
    private readonly now = () => Date.now(),
    private readonly metrics?: Metrics,
  ) {}

  record(kind: ClientErrorKind): void {
    this.metrics?.httpClientErrors.inc({ kind });
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (this.timer) return;
    this.windowStart = this.now();
    this.timer = setTimeout(() => this.flush(), this.intervalMs).unref();
  }

  /** Logs and forgets what was counted; the service calls it when it stops too. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.counts.size === 0) return;
    const seconds = Math.max(1, Math.round((this.now() - this.windowStart) / 1000));
    const parts = [...this.counts].map(([kind, count]) => `${count} ${kind}`);
    this.counts.clear();
    this.logger.log(`client errors in the last ${seconds} s: ${parts.join(', ')}`);
  }
}
