import { requestIdHeader } from './schema-kit';
import { approval, approvalPaths } from './back-office/approvals.openapi';
import { rebuild, rebuildPaths, statement, statementLine, verificationPaths, walletHistoryPaths } from './back-office/auditors.openapi';
import {
  bulkApply,
  bulkReconciliationPaths,
  requeryJob,
  requeryJobSummary,
  upstreamReport,
  upstreamReportSummary,
} from './back-office/bulk-reconciliation.openapi';
import { callbackLog, callbackPaths } from './back-office/callbacks.openapi';
import { catalogueChanges, catalogueListings } from './back-office/catalogue.openapi';
import { merchant, merchantPaths } from './back-office/merchants.openapi';
import { dashboard, dashboardPaths, probePaths, statusPaths } from './back-office/operations.openapi';
import { orderSearchPaths } from './back-office/orders.openapi';
import { orderDetail, reconciliationPaths } from './back-office/reconciliation.openapi';
import { staffMember, staffPaths } from './back-office/staff.openapi';

/** The back office (and the operators' probes) as an OpenAPI 3.1 document; test/api-docs keeps it true to the running service. */
export function backOfficeDocument() {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Top-up back office',
      version: '1',
      description:
        "Staff routes under /admin/v1 with a bearer token (ADMIN_TOKEN or a staff token), and the operators' probes. " +
        'Bodies are JSON objects of at most 64 KiB (1 MiB for the bulk reconciliation routes that list orders), parsed as JSON whatever the Content-Type says; ' +
        'an upstream report is uploaded as CSV or multipart/form-data of at most 10 MiB. See docs/back-office-api.md.',
    },
    servers: [{ url: '/', description: 'This service' }],
    tags: [
      { name: 'Provisioning', description: 'Staff, merchants, deposits, catalogue and prices' },
      { name: 'Reconciliation and audit', description: 'Unknown-result orders, callbacks, statements, verification, rebuilds' },
      { name: 'Operations', description: 'Health probes, metrics and these documents: no staff token' },
    ],
    // Paths in the order the page at /docs lists them.
    paths: {
      ...staffPaths(),
      ...merchantPaths(),
      ...catalogueListings(),
      ...orderSearchPaths(),
      ...statusPaths(),
      ...dashboardPaths(),
      ...catalogueChanges(),
      ...reconciliationPaths(),
      ...approvalPaths(),
      ...bulkReconciliationPaths(),
      ...callbackPaths(),
      ...walletHistoryPaths(),
      ...verificationPaths(),
      ...rebuildPaths(),
      ...probePaths(),
    },
    components: {
      schemas: {
        Merchant: merchant,
        StaffMember: staffMember,
        OrderDetail: orderDetail,
        Approval: approval,
        CallbackLog: callbackLog,
        Statement: statement,
        StatementLine: statementLine,
        Rebuild: rebuild,
        Dashboard: dashboard,
        RequeryJob: requeryJob,
        RequeryJobSummary: requeryJobSummary,
        UpstreamReport: upstreamReport,
        UpstreamReportSummary: upstreamReportSummary,
        BulkApply: bulkApply,
      },
      headers: { 'X-Request-Id': requestIdHeader },
      securitySchemes: {
        StaffToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'ADMIN_TOKEN, or a staff token from POST /admin/v1/staff. The staff console (/console) uses a session cookie instead, with X-CSRF-Token on changes.',
        },
        MetricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set' },
      },
    },
  };
}
