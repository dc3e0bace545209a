import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { OrderRow, OrderSearch, searchOrders } from '../../../projections/orders.queries';

export type { OrderRow } from '../../../projections/orders.queries';

/** Order search over the orders read model, newest first. */
@Injectable()
export class OrdersReader {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Up to `limit` rows after the cursor. */
  search(search: OrderSearch): Promise<OrderRow[]> {
    return searchOrders(this.pool, search);
  }
}
