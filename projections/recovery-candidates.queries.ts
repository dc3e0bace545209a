import { Pool } from 'pg';
import { HeldFunds, RecoveryCandidates } from '../src/ledger/ports/recovery-candidates.port';
import { stuckOrderNos } from './orders.queries';
import { strayHoldRows } from './wallets.queries';

/** The process manager's candidates, from the orders and wallets read models. */
export class ReadModelRecoveryCandidates implements RecoveryCandidates {
  constructor(private readonly pool: Pool) {}

  stuckOrders(graceMs: number, limit: number): Promise<string[]> {
    return stuckOrderNos(this.pool, graceMs, limit);
  }

  async strayHolds(graceMs: number, limit: number): Promise<HeldFunds[]> {
    const rows = await strayHoldRows(this.pool, graceMs, limit);
    return rows.map((row) => ({ merchantId: row.merchant_id, orderNo: row.order_no, attempt: row.attempt }));
  }
}
