import { Get, Query } from '@nestjs/common';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { OrderStage } from '../../ledger/order/order.decider';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { choiceParameter, decodeCursor, identifierParameter, instantParameter, ListPage, page, pageSize, queryParameters } from '../http/listing';
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

const FILTERS = ['merchant_id', 'order_no', 'out_trade_no', 'account_id', 'status', 'stage', 'created_from', 'created_to', 'completed_from', 'completed_to'];

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
  async search(@Query() query: Record<string, unknown>) {
    const q = queryParameters(query, FILTERS);
    const limit = pageSize(q.limit);
    const status = choiceParameter(q.status, 'status', STATUSES);
    const rows = await this.orders.search({
      merchantId: identifierParameter(q.merchant_id, 'merchant_id'),
      orderNo: identifierParameter(q.order_no, 'order_no'),
      outTradeNo: identifierParameter(q.out_trade_no, 'out_trade_no'),
      accountId: accountId(q.account_id),
      stages: status && STAGES_OF_STATUS[status],
      stage: choiceParameter(q.stage, 'stage', STAGES),
      createdFrom: instantParameter(q.created_from, 'created_from'),
      createdTo: instantParameter(q.created_to, 'created_to'),
      completedFrom: instantParameter(q.completed_from, 'completed_from'),
      completedTo: instantParameter(q.completed_to, 'completed_to'),
      after: decodeCursor(q.cursor, 2),
      // One past the page tells whether another page follows.
      limit: limit + 1,
    });
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.order_no]);
    const names = await this.names.of({ merchants: shown.map((r) => r.merchant_id), staff: shown.map((r) => r.resolved_by) });
    return successEnvelope('OK', { orders: shown.map((r) => orderSummaryView(r, names)), next_cursor } satisfies ListPage<'orders', OrderSummaryView>);
  }
}

/** Account ids are 1-64 printable characters, as on the merchant API. */
function accountId(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[^\u0000-\u001f\u007f]{1,64}$/u.test(raw)) {
    throw new ApiError(422, 'VALIDATION_FAILED', 'account_id must be 1-64 printable characters', 'account_id');
  }
  return raw;
}
