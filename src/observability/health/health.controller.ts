import { Controller, Get, Inject, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig } from '../../config/config';
import { failureEnvelope, successEnvelope } from '../../infrastructure/http/api-error';
import { comparePositions, formatPosition, GlobalPosition, START } from '../../ledger/ports/event-store.port';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { ProjectionRunner } from '../../../projections/projection-runner';
import { Readiness } from './readiness';

@Controller('health')
export class HealthController {
  private readonly startedAt = Date.now();
  private readonly logger = new Logger('Readiness');
  /** Checks failing at the last probe: each failure is logged when it starts, not at every probe. */
  private failing = new Set<string>();

  constructor(
    private readonly projections: ProjectionRunner,
    private readonly readiness: Readiness,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The summary: always 200 while the process serves, with this instance's
   * projection positions; null for a projection that has processed no event yet.
   */
  @Get()
  health() {
    return successEnvelope('OK', {
      status: 'ok',
      event_store: this.config.eventStore,
      projections: Object.fromEntries(this.projections.projections.map((p) => [p.name, shownPosition(this.projections.position(p.name))])),
    });
  }

  /** Liveness: the process runs and its event loop answers. Nothing else, so a database outage never gets it restarted. */
  @Get('live')
  live() {
    return successEnvelope('OK', { status: 'live', uptime_s: Math.floor((Date.now() - this.startedAt) / 1000) });
  }

  /** Readiness: 200 when every check passes, else 503 naming what failed. */
  @Get('ready')
  async ready(@Res() response: Response): Promise<void> {
    const { ready, checks } = await this.readiness.check();
    const failing = new Set(Object.keys(checks).filter((name) => !checks[name as keyof typeof checks].ok));
    for (const name of failing) {
      const { error, cause } = checks[name as keyof typeof checks];
      if (!this.failing.has(name)) this.logger.warn(`readiness check ${name} fails: ${error}${cause === undefined ? '' : ` (${String(cause)})`}`);
    }
    for (const name of this.failing) if (!failing.has(name)) this.logger.log(`readiness check ${name} passes again`);
    this.failing = failing;
    const shown = Object.fromEntries(Object.entries(checks).map(([name, { cause: _logged, ...check }]) => [name, check]));
    if (ready) {
      response.status(200).json(successEnvelope('OK', { status: 'ready', checks: shown }));
      return;
    }
    const failed = Object.entries(checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.error}`);
    response
      .status(503)
      .set('Retry-After', '5')
      .json({ ...failureEnvelope('NOT_READY', `Not ready: ${failed.join('; ')}`), checks: shown });
  }
}

/** A position for the reply: null before the first event, never the internal START marker. */
function shownPosition(position: GlobalPosition): string | null {
  return comparePositions(position, START) === 0 ? null : formatPosition(position);
}
