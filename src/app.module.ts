import { DynamicModule, Module } from '@nestjs/common';
import { ProjectionsModule } from '../projections/projections.module';
import { AppConfig } from './config/config';
import { HealthController } from './health/health.controller';
import { InfrastructureModule } from './infrastructure/infrastructure.module';
import { LedgerModule } from './ledger/ledger.module';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [InfrastructureModule.forRoot(config), ProjectionsModule, LedgerModule],
      controllers: [HealthController],
    };
  }
}
