import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { AuditTrail } from '../staff-audit-trail/audit-trail';
import { ResolveOrder } from '../../ledger/commands/resolve-order/resolve-order.command';

@Injectable()
export class ResolveOrderService {
  constructor(
    private readonly commands: CommandBus,
    private readonly audit: AuditTrail,
  ) {}

  async resolve(orderNo: string, outcome: 'success' | 'failed', note: string, staffId: string): Promise<void> {
    await this.commands.execute(new ResolveOrder(orderNo, outcome, staffId, note));
    // The event is the record; the audit row lists the action beside the other staff changes.
    await this.audit.record({ staffId, action: 'order.resolved', target: `order:${orderNo}`, details: { outcome, note } });
  }
}
