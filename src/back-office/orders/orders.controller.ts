import { Get } from '@nestjs/common';
import { successEnvelope } from '../../infrastructure/http/api-error';
import { OrderStage } from '../../ledger/order/order.decider';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../http/listing';
import { choice, identifier, instant, text } from '../http/query-readers';
import { QueryString, QueryValues } from '../http/query-string';
import { OrderSummaryView, orderSummaryView } from './order.view';
import { OrdersReader } from './orders.reader';
import { DisplayNames } from '../display-names/display-names';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const STAGES: readonly Exclude<OrderStage, 'none'>[] = ['placed', 'refused', 'accepted', 'sent', 'unknown', 'succeeding', 'failing', 'succeeded', 'failed'];
const STATUSES = ['processing', 'success', 'failed'] as const;
/** The merchant's status, as the internal stages it covers. */
const STAGES_OF_STATUS: Record<(typeof STATUSES)[number], OrderStage[]> = {
  processing: ['accepted', 'sent', 'unknown', 'succeeding', 'failing'],
  success: ['succeeded'],
  failed: ['failed'],
};

const SEARCH_QUERY = listQuery(
  {
    merchant_id: identifier,
    order_no: identifier,
    out_trade_no: identifier,
    // Account ids are 1-64 printable characters, as on the merchant API.
    account_id: text(64),
    status: choice(STATUSES),
    stage: choice(STAGES),
    created_from: instant,
    created_to: instant,
    completed_from: instant,
    completed_to: instant,
  },
  2,
);

/**
 * Order search for support and reconciliation, over the orders read model:
 * newest first, every filter optional and combined with "and". Refused
 * submits are listed too (stage `refused`, status null): a merchant's
 * ticket often asks why one never became an order.
 */
@BackOfficeController()
@Roles('reconciler', 'auditor')
export class OrdersController {
  constructor(
    private readonly orders: OrdersReader,
    private readonly names: DisplayNames,
  ) {}

  @Get(BACK_OFFICE_ROUTES.orders)
  async search(@QueryString(SEARCH_QUERY) q: QueryValues<typeof SEARCH_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const rows = await this.orders.search({
      merchantId: q.merchant_id,
      orderNo: q.order_no,
      outTradeNo: q.out_trade_no,
      accountId: q.account_id,
      stages: q.status && STAGES_OF_STATUS[q.status],
      stage: q.stage,
      createdFrom: q.created_from,
      createdTo: q.created_to,
      completedFrom: q.completed_from,
      completedTo: q.completed_to,
      after: q.cursor,
      // One past the page tells whether another page follows.
      limit: limit + 1,
    });
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.order_no]);
    const names = await this.names.of({ merchants: shown.map((r) => r.merchant_id), staff: shown.map((r) => r.resolved_by) });
    return successEnvelope('OK', { orders: shown.map((r) => orderSummaryView(r, names)), next_cursor } satisfies ListPage<'orders', OrderSummaryView>);
  }
}
