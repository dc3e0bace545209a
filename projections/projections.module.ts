import { Global, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../src/infrastructure/infrastructure.tokens';
import { RECOVERY_CANDIDATES } from '../src/ledger/ports/recovery-candidates.port';
import { WARMUP_CANDIDATES } from '../src/ledger/ports/warmup-candidates.port';
import { fedProjections } from './all-projections';
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

@Global()
@Module({
  providers: [
    projectionRunnerProvider(ProjectionRunner, fedProjections, 'Projections'),
    ProjectionLifecycle,
    { provide: RECOVERY_CANDIDATES, inject: [PG_POOL], useFactory: (pool: Pool) => new ReadModelRecoveryCandidates(pool) },
    { provide: WARMUP_CANDIDATES, inject: [PG_POOL], useFactory: (pool: Pool) => new ReadModelWarmupCandidates(pool) },
  ],
  exports: [ProjectionRunner, RECOVERY_CANDIDATES, WARMUP_CANDIDATES],
})
export class ProjectionsModule {}
