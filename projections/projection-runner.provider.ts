import { Logger, Provider } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore } from '../src/ledger/ports/event-store.port';
import { PG_POOL } from '../src/infrastructure/infrastructure.tokens';
import { Projection } from './projection';
import { ProjectionRunner } from './projection-runner';
import { logFailure } from '../src/infrastructure/logging/log-failure';

/** A Nest provider for a ProjectionRunner over these projections, logging under `name`. */
export function projectionRunnerProvider(token: symbol | typeof ProjectionRunner, projections: readonly Projection[], name: string): Provider {
  return {
    provide: token,
    inject: [PG_POOL, EVENT_STORE],
    useFactory: (pool: Pool, store: EventStore) => {
      const logger = new Logger(name);
      return new ProjectionRunner(pool, store, projections, (message, error) => logFailure(logger, message, error));
    },
  };
}
