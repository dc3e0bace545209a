import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { inOneSnapshot } from '../../infrastructure/postgres/transactions';

export interface QueueRow {
  order_no: string;
  merchant_id: string;
  out_trade_no: string;
  sku_id: string;
  account_id: string;
  account_fields: Record<string, string>;
  amount: string;
  currency: string;
  upstream_attempts: number;
  unknown_reason: string | null;
  unknown_evidence: string | null;
  created_at: Date;
  result_unknown_at: Date;
  age_seconds: number;
}

/** The orders waiting for a person, from the orders read model. */
@Injectable()
export class ReconciliationQueueReader {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** A page, oldest first, and the total as of one moment: read apart, the total could count an order the page lacks. */
  async page(limit: number, offset: number): Promise<{ rows: QueueRow[]; total: number }> {
    return inOneSnapshot(this.pool, async (client) => ({
      rows: (
        await client.query<QueueRow>(
          `select *, extract(epoch from now() - result_unknown_at)::int as age_seconds from rm_orders
           where stage = 'unknown' order by result_unknown_at, order_no limit $1 offset $2`,
          [limit, offset],
        )
      ).rows,
      total: (await client.query<{ n: number }>(`select count(*)::int as n from rm_orders where stage = 'unknown'`)).rows[0].n,
    }));
  }
}
