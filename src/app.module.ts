import { DynamicModule, Module } from '@nestjs/common';
import { ProjectionsModule } from '../projections/projections.module';
import { AppConfig } from './config/config';
import { BackOfficeModule } from './back-office/back-office.module';
import { CallbacksModule } from './callbacks/callbacks.module';
import { ConsoleModule } from './console/console.module';
import { FulfilmentModule } from './fulfilment/fulfilment.module';
import { InfrastructureModule } from './infrastructure/infrastructure.module';
import { LedgerModule } from './ledger/ledger.module';
import { MerchantApiModule } from './merchant-api/merchant-api.module';
import { MerchantDirectoryModule } from './merchant-directory/merchant-directory.module';
import { Metrics } from './infrastructure/metrics/metrics';
import { ObservabilityModule } from './observability/observability.module';
import { ApiDocsModule } from './api-docs/api-docs.module';
import { allMigrations } from './schema';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig, metrics = new Metrics()): DynamicModule {
    return {
      module: AppModule,
      imports: [
        InfrastructureModule.forRoot({ config, metrics, migrations: allMigrations(config) }),
        ProjectionsModule,
        LedgerModule,
        MerchantDirectoryModule,
        BackOfficeModule,
        MerchantApiModule,
        FulfilmentModule,
        CallbacksModule,
        ConsoleModule,
        ObservabilityModule,
        ApiDocsModule,
      ],
    };
  }
}
