import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { inTransaction } from '../../infrastructure/postgres/transactions';
import { recordAudit } from '../audit/audit-trail';
import { ResolveOrder } from './resolve-order.command';

@Injectable()
export class ResolveOrderService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly commands: CommandBus,
  ) {}

  async resolve(orderNo: string, outcome: 'success' | 'failed', note: string, staffId: string): Promise<void> {
    await this.commands.execute(new ResolveOrder(orderNo, outcome, staffId, note));
    // The event is the record; the audit row lists the action beside the other staff changes.
    await inTransaction(this.pool, (client) =>
      recordAudit(client, { staffId, action: 'order.resolved', target: `order:${orderNo}`, details: { outcome, note } }),
    );
  }
}
