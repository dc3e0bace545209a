import { Controller, Get, Inject } from '@nestjs/common';
import { AppConfig } from '../config/config';
import { formatPosition } from '../infrastructure/event-store/event-store.port';
import { APP_CONFIG } from '../infrastructure/infrastructure.tokens';
import { ProjectionRunner } from '../../projections/projection-runner';

@Controller('health')
export class HealthController {
  constructor(
    private readonly projections: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  health() {
    return {
      status: 'ok',
      event_store: this.config.eventStore,
      projections: Object.fromEntries(this.projections.projections.map((p) => [p.name, formatPosition(this.projections.position(p.name))])),
    };
  }
}
