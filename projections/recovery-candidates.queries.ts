import { Pool } from 'pg';
import { HeldFunds, RecoveryCandidates } from '../src/ledger/ports/recovery-candidates.port';
import { stuckOrderNos } from './orders.queries';

/** The process manager's candidates, from the orders and wallets read models. */
export class ReadModelRecoveryCandidates implements RecoveryCandidates {
  constructor(private readonly pool: Pool) {}

  stuckOrders(graceMs: number, limit: number): Promise<string[]> {
    return stuckOrderNos(this.pool, graceMs, limit);
  }

  async strayHolds(graceMs: number, limit: number): Promise<HeldFunds[]> {
    const { rows } = await this.pool.query<{ merchant_id: string; order_no: string; attempt: number }>(
      `select h.merchant_id, h.order_no, h.attempt from rm_wallet_holds h
       left join rm_orders o on o.order_no = h.order_no
       where (o.order_no is null or o.attempt <> h.attempt or o.stage in ('placed', 'refused'))
         and h.frozen_at < now() - make_interval(secs => $1::float8 / 1000)
       limit $2`,
      [graceMs, limit],
    );
    return rows.map((row) => ({ merchantId: row.merchant_id, orderNo: row.order_no, attempt: row.attempt }));
  }
}
