/**
 * The back office's routes, written once: its controllers mount them under
 * the prefix (back-office-controller.decorator.ts) and the OpenAPI document
 * describes them (documentedPath). Parameters in Nest's form, `:name`.
 */
export const BACK_OFFICE_PREFIX = '/admin/v1';

export const BACK_OFFICE_ROUTES = {
  staff: 'staff',
  staffToken: 'staff/:staff_id/token',
  staffDisable: 'staff/:staff_id/disable',
  merchants: 'merchants',
  merchant: 'merchants/:merchant_id',
  appSecret: 'merchants/:merchant_id/app-secret',
  previousAppSecret: 'merchants/:merchant_id/app-secret/previous',
  deposits: 'merchants/:merchant_id/deposits',
  products: 'products',
  product: 'products/:product_id',
  skus: 'skus',
  sku: 'skus/:sku_id',
  prices: 'merchants/:merchant_id/prices',
  price: 'merchants/:merchant_id/prices/:sku_id',
  orders: 'orders',
  order: 'orders/:order_no',
  orderCallbacks: 'orders/:order_no/callbacks',
  redeliverCallback: 'orders/:order_no/callbacks/redeliver',
  status: 'status',
  operationsDashboard: 'operations/dashboard',
  reconciliationQueue: 'reconciliation/orders',
  resolveOrder: 'reconciliation/orders/:order_no/resolve',
  requeryOrder: 'reconciliation/orders/:order_no/requery',
  requeryJobs: 'reconciliation/requery',
  requeryJob: 'reconciliation/requery/:job_id',
  requeryJobApply: 'reconciliation/requery/:job_id/apply',
  reports: 'reconciliation/reports',
  reportsFetch: 'reconciliation/reports/fetch',
  report: 'reconciliation/reports/:report_id',
  reportExport: 'reconciliation/reports/:report_id/export',
  reportOriginal: 'reconciliation/reports/:report_id/original',
  reportApply: 'reconciliation/reports/:report_id/apply',
  statement: 'wallets/:merchant_id/statement',
  statementExport: 'wallets/:merchant_id/statement/export',
  chain: 'wallets/:merchant_id/chain',
  balanceAsOf: 'wallets/:merchant_id/balance',
  adjustments: 'wallets/:merchant_id/adjustments',
  approvals: 'approvals',
  approval: 'approvals/:approval_id',
  approveApproval: 'approvals/:approval_id/approve',
  rejectApproval: 'approvals/:approval_id/reject',
  verify: 'audit/verify',
  rebuild: 'projections/rebuild',
  rebuildRun: 'projections/rebuild/:rebuild_id',
} as const;

/** A route as the OpenAPI document writes it: `/admin/v1/merchants/{merchant_id}`. */
export const documentedPath = (route: string) => `${BACK_OFFICE_PREFIX}/${route.replace(/:(\w+)/g, '{$1}')}`;
