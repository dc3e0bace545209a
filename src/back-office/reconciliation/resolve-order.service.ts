import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { loadAggregate } from '../../ledger/command-handling';
import { ResolveOrder } from '../../ledger/commands/resolve-order/resolve-order.command';
import { merchantStatus, orderDecider, ResolutionEvidence } from '../../ledger/order/order.decider';
import { EVENT_STORE, EventStore } from '../../ledger/ports/event-store.port';
import { orderStream } from '../../ledger/streams';
import { CommandRefusedError } from '../../shared/command-refused';
import { ApprovalGate, ApprovalParties } from '../approvals/approval-gate';
import type { ApprovalView } from '../approvals/approval.view';
import { payloadChoice, payloadText } from '../approvals/approval-payload';
import { AuditTrail } from '../staff-audit-trail/audit-trail';

type Outcome = 'success' | 'failed';

@Injectable()
export class ResolveOrderService implements OnModuleInit {
  constructor(
    private readonly commands: CommandBus,
    private readonly audit: AuditTrail,
    private readonly approvals: ApprovalGate,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  onModuleInit(): void {
    this.approvals.registerExecutor('resolution', (payload, who) => this.carryOut(payload, who));
  }

  /**
   * Resolves the order, or, when its amount is over APPROVAL_THRESHOLD,
   * asks a second person to (key: the order, so one request waits per order).
   * Only an order that waits for a resolution becomes a request: any other
   * gets the ledger's refusal at once.
   */
  async resolve(orderNo: string, outcome: Outcome, note: string, staffId: string): Promise<{ approval?: ApprovalView }> {
    if (this.approvals.active) {
      const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
      const amounts = state.stage === 'unknown' ? [{ currency: state.order.currency, amount: state.order.amount }] : [];
      if (state.stage === 'unknown' && this.approvals.needsApproval(amounts)) {
        const approval = await this.approvals.request({
          kind: 'resolution',
          summary: `Resolve order ${orderNo} as ${outcome}`,
          merchantId: state.order.merchantId,
          amounts,
          payload: { order_no: orderNo, outcome, note },
          requestedBy: staffId,
          note,
          key: orderNo,
        });
        // Approved already: carried out, so resolving again gets the ledger's answer to a resolved order.
        if (approval.status === 'pending') return { approval };
      }
    }
    await this.resolveNow(orderNo, outcome, note, staffId);
    return {};
  }

  private async resolveNow(
    orderNo: string,
    outcome: Outcome,
    note: string,
    staffId: string,
    backing: { evidence?: ResolutionEvidence; approvedBy?: string } = {},
  ) {
    await this.commands.execute(new ResolveOrder(orderNo, outcome, staffId, note, backing));
    // The event is the record; the audit row lists the action beside the other staff changes.
    const approved = backing.approvedBy === undefined ? {} : { approved_by: backing.approvedBy };
    await this.audit.record({ staffId, action: 'order.resolved', target: `order:${orderNo}`, details: { outcome, note, ...approved } });
  }

  /**
   * The approved resolution: the same command, with its approver. Carried
   * out again (after a crash), it finds the order resolved by this very
   * request and reports it done; resolved by anyone else meanwhile, the
   * ledger's refusal stands and the approval records it.
   */
  private async carryOut(payload: Record<string, unknown>, { requestedBy, approvedBy }: ApprovalParties): Promise<Record<string, unknown>> {
    const orderNo = payloadText(payload, 'order_no');
    const outcome = payloadChoice(payload, 'outcome', ['success', 'failed'] as const);
    const note = payloadText(payload, 'note');
    const evidence = payload.evidence as ResolutionEvidence | undefined;
    try {
      await this.resolveNow(orderNo, outcome, note, requestedBy, { approvedBy, ...(evidence === undefined ? {} : { evidence }) });
    } catch (error) {
      if (!(error instanceof CommandRefusedError) || !(await this.resolvedAs(orderNo, { outcome, requestedBy, approvedBy }))) throw error;
    }
    const { state } = await loadAggregate(this.store, orderStream(orderNo), orderDecider);
    return { order_no: orderNo, stage: state.stage, status: merchantStatus(state.stage) ?? null };
  }

  /** Whether the order's resolution is this one: the same outcome, asked and approved by the same people. */
  private async resolvedAs(orderNo: string, asked: { outcome: Outcome; requestedBy: string } & Pick<ApprovalParties, 'approvedBy'>): Promise<boolean> {
    const history = await this.store.readStream(orderStream(orderNo));
    const resolved = history.find((e) => e.type === 'OrderResolved');
    return (
      resolved !== undefined &&
      resolved.data.outcome === asked.outcome &&
      resolved.data.resolvedBy === asked.requestedBy &&
      resolved.data.approvedBy === asked.approvedBy
    );
  }
}
