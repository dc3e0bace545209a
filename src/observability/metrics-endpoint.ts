import { createHash, timingSafeEqual } from 'node:crypto';
import { AppConfig } from '../config/config';
import { failureEnvelope } from '../infrastructure/http/api-error';
import { Metrics } from '../infrastructure/metrics/metrics';

export interface MetricsReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const json = { 'Content-Type': 'application/json; charset=utf-8' };

/**
 * Where /metrics is served and who may read it. With METRICS_PORT it is
 * served there only; with METRICS_TOKEN it needs that bearer token; in
 * production with neither it is not served at all, so that business volumes
 * never reach the public API's port unprotected by accident.
 */
export class MetricsEndpoint {
  private readonly tokenHash?: Buffer;

  constructor(
    private readonly metrics: Metrics,
    private readonly config: Pick<AppConfig, 'production' | 'metricsToken' | 'metricsPort'>,
  ) {
    if (config.metricsToken) this.tokenHash = sha256(config.metricsToken);
  }

  /** Whether the API's own port serves /metrics. */
  get onApiPort(): boolean {
    return this.config.metricsPort === undefined && (!this.config.production || this.config.metricsToken !== undefined);
  }

  async reply(authorization: string | undefined): Promise<MetricsReply> {
    if (this.tokenHash && !this.authorized(authorization)) {
      const body = JSON.stringify(failureEnvelope('UNAUTHORIZED', 'A valid metrics bearer token (METRICS_TOKEN) is required'));
      return { status: 401, headers: { ...json, 'WWW-Authenticate': 'Bearer' }, body };
    }
    return { status: 200, headers: { 'Content-Type': this.metrics.contentType }, body: await this.metrics.scrape() };
  }

  private authorized(authorization: string | undefined): boolean {
    const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(sha256(match[1]), this.tokenHash!);
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
