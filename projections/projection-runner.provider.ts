import { Logger, Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore } from '../src/ledger/ports/event-store.port';
import { AppConfig } from '../src/config/config';
import { APP_CONFIG, PG_POOL } from '../src/infrastructure/infrastructure.tokens';
import { Projection } from './projection';
import { InProcessProjectionRunner, ProjectionRunner } from './projection-runner';
import { ThreadedProjectionRunner } from './threaded-projection-runner';
import { logFailure } from '../src/infrastructure/logging/log-failure';

/** A Nest provider for a ProjectionRunner over these projections, on a thread of its own unless PROJECTION_THREAD=false, logging under `name`. */
export function projectionRunnerProvider(token: symbol | typeof ProjectionRunner, projections: readonly Projection[], name: string): Provider {
  return {
    provide: token,
    inject: [PG_POOL, EVENT_STORE, APP_CONFIG],
    useFactory: (pool: Pool, store: EventStore, config: AppConfig): ProjectionRunner => {
      const logger = new Logger(name);
      if (config.projectionThread) return new ThreadedProjectionRunner(projections, config, logger);
      return new InProcessProjectionRunner(pool, store, projections, (message, error) => logFailure(logger, message, error));
    },
  };
}
