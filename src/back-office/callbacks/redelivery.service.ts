import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { CallbackLog } from '../../callbacks/callback-log';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { recordAudit } from '../audit/audit-trail';

/** Manual redelivery of a final order's callback, recorded in the audit trail. */
@Injectable()
export class RedeliveryService {
  constructor(
    private readonly log: CallbackLog,
    @Inject(PG_POOL) private readonly pool: Pool,
  ) {}

  /** False when the order has no callback: it does not exist or is not final yet. */
  async redeliver(orderNo: string, staffId: string): Promise<boolean> {
    if (!(await this.log.redeliver(orderNo))) return false;
    await inTransaction(this.pool, (client) =>
      recordAudit(client, { staffId, action: 'callback.redelivery_requested', target: `order:${orderNo}`, details: {} }),
    );
    return true;
  }
}
