import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { OrderStage } from '../../ledger/order/order.decider';
import type { OrderReadModelRow } from '../../../projections/orders.projection';
import { Conditions } from '../http/listing';

/** A row of the order search: the read model's row and its sort key. */
export interface OrderRow extends OrderReadModelRow {
  /** created_at as Postgres prints it, full precision: the cursor's sort key. */
  sort_at: string;
}

/** The order search's filters, already checked; each is optional and they combine with "and". */
export interface OrderSearch {
  merchantId?: string;
  orderNo?: string;
  outTradeNo?: string;
  accountId?: string;
  /** The stages a merchant-facing status covers. */
  stages?: readonly OrderStage[];
  stage?: OrderStage;
  createdFrom?: Date;
  createdTo?: Date;
  completedFrom?: Date;
  completedTo?: Date;
  /** The sort key (sort_at, order_no) of the last row of the previous page. */
  after?: readonly string[];
  limit: number;
}

/** Order search over the orders read model, newest first. */
@Injectable()
export class OrdersReader {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Up to `limit` rows after the cursor. */
  async search(search: OrderSearch): Promise<OrderRow[]> {
    const where = new Conditions()
      .addIf(search.merchantId, 'merchant_id = ?')
      .addIf(search.orderNo, 'order_no = ?')
      .addIf(search.outTradeNo, 'out_trade_no = ?')
      .addIf(search.accountId, 'account_id = ?')
      .addIf(search.stages, 'stage = any(?)')
      .addIf(search.stage, 'stage = ?')
      .addIf(search.createdFrom, 'created_at >= ?')
      .addIf(search.createdTo, 'created_at < ?')
      .addIf(search.completedFrom, 'completed_at >= ?')
      .addIf(search.completedTo, 'completed_at < ?');
    if (search.after) where.add('(created_at, order_no) < (?::timestamptz, ?)', ...search.after);
    const { rows } = await this.pool.query<OrderRow>(
      `select *, created_at::text as sort_at from rm_orders ${where.where()} order by created_at desc, order_no desc limit ${where.next(search.limit)}`,
      where.values,
    );
    return rows;
  }
}
