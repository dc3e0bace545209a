import { Injectable, Global, Inject, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { EVENT_STORE, EventStore } from '../src/infrastructure/event-store/event-store.port';
import { PG_POOL } from '../src/infrastructure/infrastructure.tokens';
import { allProjections } from './all-projections';
import { ProjectionRunner } from './projection-runner';

@Injectable()
class ProjectionLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly runner: ProjectionRunner) {}

  onApplicationBootstrap(): Promise<void> {
    return this.runner.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.runner.stop();
  }
}

@Global()
@Module({
  providers: [
    {
      provide: ProjectionRunner,
      inject: [PG_POOL, EVENT_STORE],
      useFactory: (pool: Pool, store: EventStore) => {
        const logger = new Logger('Projections');
        return new ProjectionRunner(pool, store, allProjections, (message, error) => logger.error(message, error as Error));
      },
    },
    ProjectionLifecycle,
  ],
  exports: [ProjectionRunner],
})
export class ProjectionsModule {}
