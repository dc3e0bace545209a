import { Module } from '@nestjs/common';
import { AuditingModule } from '../auditing/auditing.module';
import { CallbacksModule } from '../callbacks/callbacks.module';
import { FulfilmentModule } from '../fulfilment/fulfilment.module';
import { LedgerModule } from '../ledger/ledger.module';
import { MerchantDirectoryModule } from '../merchant-directory/merchant-directory.module';
import { AuditTrail } from './staff-audit-trail/audit-trail';
import { AdjustWalletController } from './adjustments/adjust-wallet.controller';
import { AdjustWalletService } from './adjustments/adjust-wallet.service';
import { ApprovalGate } from './approvals/approval-gate';
import { ApprovalInbox } from './approvals/approval-inbox';
import { ApprovalLog } from './approvals/approval-log';
import { ApprovalsController } from './approvals/approvals.controller';
import { ApprovalsRepository } from './approvals/approvals.repository';
import { ConsoleSessions } from './auth/console-sessions';
import { StaffAuthenticator } from './auth/staff-authenticator';
import { StaffAuthGuard } from './auth/staff-auth.guard';
import { RebuildController } from './read-models/rebuild.controller';
import { RebuildRunner } from './read-models/rebuild-runner';
import { RebuildRuns } from './read-models/rebuild-runs';
import { VerificationController } from './read-models/verification.controller';
import { WalletHistoryController } from './wallet-history/wallet-history.controller';
import { CallbacksController } from './callbacks/callbacks.controller';
import { CatalogueController } from './catalogue/catalogue.controller';
import { CatalogueRepository } from './catalogue/catalogue.repository';
import { JsonBodyInterceptor } from './http/json-body.interceptor';
import { DisplayNames } from './display-names/display-names';
import { DepositFundsController } from './merchants/deposit-funds.controller';
import { DepositFundsService } from './merchants/deposit-funds.service';
import { MerchantsController } from './merchants/merchants.controller';
import { MerchantsRepository } from './merchants/merchants.repository';
import { MerchantsService } from './merchants/merchants.service';
import { DashboardController } from './operations/dashboard.controller';
import { DashboardReader } from './operations/dashboard.reader';
import { StatusController } from './operations/status.controller';
import { StatusReader } from './operations/status.reader';
import { OrdersController } from './orders/orders.controller';
import { OrdersReader } from './orders/orders.reader';
import { OrderDetailReader } from './reconciliation/order-detail.reader';
import { ReconciliationController } from './reconciliation/reconciliation.controller';
import { ReconciliationQueueReader } from './reconciliation/reconciliation-queue.reader';
import { ResolveOrderController } from './reconciliation/resolve-order.controller';
import { ResolveOrderService } from './reconciliation/resolve-order.service';
import { BulkApplyRequests } from './reconciliation/bulk-apply/bulk-apply-requests';
import { BulkResolutions } from './reconciliation/bulk-apply/bulk-resolutions';
import { ReportsController } from './reconciliation/reports/reports.controller';
import { ReportsService } from './reconciliation/reports/reports.service';
import { UpstreamReports } from './reconciliation/reports/upstream-reports';
import { BulkRequeries } from './reconciliation/requery/bulk-requeries';
import { RequeryController } from './reconciliation/requery/requery.controller';
import { RequeryJobs } from './reconciliation/requery/requery-jobs';
import { RequeryWorker } from './reconciliation/requery/requery-worker';
import { StaffController } from './staff/staff.controller';
import { StaffRepository } from './staff/staff.repository';

/** The back office: /admin/v1/*, staff bearer tokens with roles; see docs/back-office-api.md. */
@Module({
  imports: [LedgerModule, MerchantDirectoryModule, FulfilmentModule, CallbacksModule, AuditingModule],
  controllers: [
    StaffController,
    MerchantsController,
    DepositFundsController,
    CatalogueController,
    ReconciliationController,
    ResolveOrderController,
    RequeryController,
    ReportsController,
    CallbacksController,
    WalletHistoryController,
    VerificationController,
    RebuildController,
    OrdersController,
    StatusController,
    DashboardController,
    ApprovalsController,
    AdjustWalletController,
  ],
  providers: [
    ConsoleSessions,
    StaffAuthenticator,
    StaffAuthGuard,
    JsonBodyInterceptor,
    StaffRepository,
    MerchantsRepository,
    MerchantsService,
    DepositFundsService,
    ReconciliationQueueReader,
    OrderDetailReader,
    ResolveOrderService,
    RequeryJobs,
    RequeryWorker,
    BulkRequeries,
    UpstreamReports,
    ReportsService,
    BulkResolutions,
    BulkApplyRequests,
    CatalogueRepository,
    RebuildRuns,
    AuditTrail,
    StatusReader,
    DashboardReader,
    OrdersReader,
    RebuildRunner,
    DisplayNames,
    ApprovalsRepository,
    ApprovalLog,
    ApprovalGate,
    ApprovalInbox,
    AdjustWalletService,
  ],
  exports: [ConsoleSessions, StaffAuthenticator],
})
export class BackOfficeModule {}
