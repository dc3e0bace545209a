import { Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { AppConfig } from '../src/config/config';
import { APP_CONFIG, PG_POOL } from '../src/infrastructure/infrastructure.tokens';
import { logFailure } from '../src/infrastructure/logging/log-failure';
import { RECOVERY_CANDIDATES } from '../src/ledger/ports/recovery-candidates.port';
import { WARMUP_CANDIDATES } from '../src/ledger/ports/warmup-candidates.port';
import { fedProjections } from './all-projections';
import { InFlightVacuum, inFlightTables } from './in-flight-vacuum';
import { ProjectionRunner } from './projection-runner';
import { projectionRunnerProvider } from './projection-runner.provider';
import { ReadModelRecoveryCandidates } from './recovery-candidates.queries';
import { ReadModelWarmupCandidates } from './warmup-candidates.queries';

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

/** Vacuums the in-flight tables while the application runs. */
@Injectable()
class InFlightVacuumLifecycle implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly vacuum: InFlightVacuum;

  constructor(@Inject(PG_POOL) pool: Pool, @Inject(APP_CONFIG) config: AppConfig, runner: ProjectionRunner) {
    const logger = new Logger('InFlightVacuum');
    this.vacuum = new InFlightVacuum(pool, inFlightTables(fedProjections), config.inFlightVacuumIntervalMs, (error) =>
      logFailure(logger, 'vacuum of the in-flight tables failed', error),
    );
    runner.onApplied(() => this.vacuum.changed());
  }

  onApplicationBootstrap(): void {
    this.vacuum.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.vacuum.stop();
  }
}

@Global()
@Module({
  providers: [
    projectionRunnerProvider(ProjectionRunner, fedProjections, 'Projections'),
    ProjectionLifecycle,
    InFlightVacuumLifecycle,
    { provide: RECOVERY_CANDIDATES, inject: [PG_POOL], useFactory: (pool: Pool) => new ReadModelRecoveryCandidates(pool) },
    { provide: WARMUP_CANDIDATES, inject: [PG_POOL], useFactory: (pool: Pool) => new ReadModelWarmupCandidates(pool) },
  ],
  exports: [ProjectionRunner, RECOVERY_CANDIDATES, WARMUP_CANDIDATES],
})
export class ProjectionsModule {}
