import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { QueueRow, unknownResultPage } from '../../../projections/orders.queries';

/** The orders waiting for a person, from the orders read model. */
@Injectable()
export class ReconciliationQueueReader {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** A page, oldest first, and the total as of one moment: read apart, the total could count an order the page lacks. */
  page(limit: number, offset: number): Promise<{ rows: QueueRow[]; total: number }> {
    return unknownResultPage(this.pool, limit, offset);
  }
}
