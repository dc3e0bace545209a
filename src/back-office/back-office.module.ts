import { Module } from '@nestjs/common';
import { AuditingModule } from '../auditing/auditing.module';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { FulfilmentModule } from '../fulfilment/fulfilment.module';
import { MerchantsModule } from '../merchants/merchants.module';
import { AuditTrail } from './audit/audit-trail';
import { ConsoleSessions } from './auth/console-sessions';
import { StaffAuthenticator } from './auth/staff-authenticator';
import { StaffAuthGuard } from './auth/staff-auth.guard';
import { RebuildController } from './auditors/rebuild.controller';
import { RebuildRunner } from './auditors/rebuild-runner';
import { RebuildRuns } from './auditors/rebuild-runs';
import { VerificationController } from './auditors/verification.controller';
import { WalletHistoryController } from './auditors/wallet-history.controller';
import { CallbacksController } from './callbacks/callbacks.controller';
import { CatalogueController } from './catalogue/catalogue.controller';
import { CatalogueRepository } from './catalogue/catalogue.repository';
import { JsonBodyInterceptor } from './http/json-body.interceptor';
import { DepositsService } from './merchants/deposits.service';
import { MerchantsController } from './merchants/merchants.controller';
import { MerchantsRepository } from './merchants/merchants.repository';
import { StatusController } from './operations/status.controller';
import { StatusReader } from './operations/status.reader';
import { OrdersController } from './orders/orders.controller';
import { OrdersReader } from './orders/orders.reader';
import { ReconciliationController } from './reconciliation/reconciliation.controller';
import { StaffController } from './staff/staff.controller';
import { StaffRepository } from './staff/staff.repository';

/** The back office: /admin/v1/*, staff bearer tokens with roles; see docs/back-office-api.md. */
@Module({
  imports: [MerchantsModule, FulfilmentModule, CallbacksModule, AuditingModule],
  controllers: [
    StaffController,
    MerchantsController,
    CatalogueController,
    ReconciliationController,
    CallbacksController,
    WalletHistoryController,
    VerificationController,
    RebuildController,
    OrdersController,
    StatusController,
  ],
  providers: [
    ConsoleSessions,
    StaffAuthenticator,
    StaffAuthGuard,
    JsonBodyInterceptor,
    StaffRepository,
    MerchantsRepository,
    DepositsService,
    CatalogueRepository,
    RebuildRuns,
    AuditTrail,
    StatusReader,
    OrdersReader,
    RebuildRunner,
  ],
  exports: [ConsoleSessions, StaffAuthenticator],
})
export class BackOfficeModule {}
