import { Get, Inject, Query } from '@nestjs/common';
import { Pool } from 'pg';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { OrderStage } from '../../ledger/order/order.decider';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { choiceParameter, Conditions, decodeCursor, identifierParameter, instantParameter, page, pageSize, queryParameters } from '../http/listing';
import { OrderRow, orderSummaryView } from './order.view';

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
@BackOfficeController('orders')
@Roles('reconciler', 'auditor')
export class OrdersController {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  @Get()
  async search(@Query() query: Record<string, unknown>) {
    const q = queryParameters(query, FILTERS);
    const limit = pageSize(q.limit);
    const status = choiceParameter(q.status, 'status', STATUSES);
    const where = new Conditions()
      .addIf(identifierParameter(q.merchant_id, 'merchant_id'), 'merchant_id = ?')
      .addIf(identifierParameter(q.order_no, 'order_no'), 'order_no = ?')
      .addIf(identifierParameter(q.out_trade_no, 'out_trade_no'), 'out_trade_no = ?')
      .addIf(accountId(q.account_id), 'account_id = ?')
      .addIf(status && STAGES_OF_STATUS[status], 'stage = any(?)')
      .addIf(choiceParameter(q.stage, 'stage', STAGES), 'stage = ?')
      .addIf(instantParameter(q.created_from, 'created_from'), 'created_at >= ?')
      .addIf(instantParameter(q.created_to, 'created_to'), 'created_at < ?')
      .addIf(instantParameter(q.completed_from, 'completed_from'), 'completed_at >= ?')
      .addIf(instantParameter(q.completed_to, 'completed_to'), 'completed_at < ?');
    const after = decodeCursor(q.cursor, 2);
    if (after) where.add('(created_at, order_no) < (?::timestamptz, ?)', ...after);
    const { rows } = await this.pool.query<OrderRow>(
      `select *, created_at::text as sort_at from rm_orders ${where.where()} order by created_at desc, order_no desc limit ${where.next(limit + 1)}`,
      where.values,
    );
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.order_no]);
    return successEnvelope('OK', { orders: shown.map(orderSummaryView), next_cursor });
  }
}

/** Account ids are 1-64 printable characters, as on the merchant API. */
function accountId(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[^\u0000-\u001f\u007f]{1,64}$/u.test(raw)) {
    throw new ApiError(422, 'VALIDATION_FAILED', 'account_id must be 1-64 printable characters', 'account_id');
  }
  return raw;
}
