import { Global, Injectable, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { fedProjections } from './all-projections';
import { ProjectionRunner } from './projection-runner';
import { projectionRunnerProvider } from './projection-runner.provider';

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
  providers: [projectionRunnerProvider(ProjectionRunner, fedProjections, 'Projections'), ProjectionLifecycle],
  exports: [ProjectionRunner],
})
export class ProjectionsModule {}
