/**
 * What the back office's routes answer, as types: the `data` of each reply,
 * and the envelopes around it. The controllers build their replies as these
 * types; the console (src/console/app) reads them through type-only imports
 * of this file, so a field renamed here breaks the build of both, not a
 * page. Nothing here exists at run time.
 */
export type { FailureEnvelope, SuccessEnvelope, Warning } from '../infrastructure/http/api-error';
export type { ListPage } from './http/listing';
export type { StaffRole } from './auth/staff-member';
export type { CreatedStaffView, StaffView, StaffWithTokenView } from './staff/staff.repository';
export type { MerchantView, MerchantWithSecretView } from './merchants/merchant.view';
export type { DepositView } from './merchants/deposit-funds.service';
export type { PriceListView, PriceView, ProductView, SkuView } from './catalogue/catalogue.view';
export type { OrderSummaryView } from './orders/order.view';
export type { OrderAdjustmentView, OrderDetailView, OrderEventView, OrderResolutionView } from './reconciliation/order-detail.reader';
export type { QueuedOrderView, QueuePageView, RequeryView } from './reconciliation/reconciliation.view';
export type { RequeryFilterView, RequeryJobSummaryView, RequeryJobView, RequeryResultView } from './reconciliation/requery/requery.view';
export type { RequeryAnswer, RequeryProposal } from './reconciliation/requery/requery-proposal';
export type {
  MatchReason,
  OursView,
  ReportCategory,
  ReportItemView,
  ReportLineError,
  TheirsView,
  UpstreamReportSummaryView,
  UpstreamReportView,
} from './reconciliation/reports/reports.view';
export type { ReportRejectedEnvelope } from './reconciliation/reports/reports.controller';
export type { ApplyResult, AppliedView, BulkApplyAmountView, BulkApplyOrderView, BulkApplyView } from './reconciliation/bulk-apply/bulk-apply.view';
export type { RebuildStartedView, RebuildView } from './read-models/rebuild-runs';
export type { InstanceStatusView, ProjectionStatusView, StatusView } from './operations/status.reader';
export type { DashboardNowView, DashboardPointView, DashboardView, LowBalanceMerchantView } from './operations/dashboard.view';
export type { ApprovalKind, ApprovalResult } from './approvals/approval.decider';
export type { ApprovalPageView, ApprovalStatus, ApprovalView } from './approvals/approval.view';
export type { AdjustedWalletView, AdjustmentView } from './adjustments/adjustment.view';
export type { CallbackAttemptView, CallbackLogView } from '../callbacks';
export type { BalanceAsOf, ChainStatus, Difference, Statement, StatementLine, VerificationReport } from '../auditing';

import type { OrderEvent } from '../ledger/order/order.decider';
import type { WalletEvent } from '../ledger/wallet/wallet.decider';

/** The type of each event an order's timeline shows (OrderEventView.type), and of each line of a wallet's statement. */
export type OrderEventType = OrderEvent['type'];
export type WalletEventType = WalletEvent['type'];
