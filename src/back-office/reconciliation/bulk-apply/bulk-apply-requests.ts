import { createHash } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { formatAmount } from '../../../shared/money';
import { ApprovalGate, ApprovalParties } from '../../approvals/approval-gate';
import { payloadText } from '../../approvals/approval-payload';
import type { ApprovalView } from '../../approvals/approval.view';
import type { BulkApplyView } from './bulk-apply.view';
import { BulkPlan, BulkResolutions, BulkSelection } from './bulk-resolutions';

/** A bulk apply done now, or the request that waits for a second person. */
export type BulkApplyAnswer = { applied: BulkApplyView; approval?: undefined } | { approval: ApprovalView; applied?: undefined };

/**
 * The four-eyes rule in front of a bulk apply: when what the apply would
 * move, summed per currency, is over APPROVAL_THRESHOLD in any currency,
 * the whole apply becomes one `bulk_resolution` request. Approved, it is
 * carried out against the orders as they stand then (BulkResolutions plans
 * afresh), each resolution naming the requester and the approver.
 */
@Injectable()
export class BulkApplyRequests implements OnModuleInit {
  constructor(
    private readonly resolutions: BulkResolutions,
    private readonly approvals: ApprovalGate,
  ) {}

  onModuleInit(): void {
    this.approvals.registerExecutor('bulk_resolution', (payload, who) => this.carryOut(payload, who));
  }

  async apply(selection: BulkSelection, note: string, staffId: string): Promise<BulkApplyAnswer> {
    if (!this.approvals.active) return { applied: await this.resolutions.apply(selection, note, staffId) };
    const plan = await this.resolutions.plan(selection);
    // Under the threshold, the plan just made is the one carried out: the orders are read once.
    if (!this.approvals.needsApproval(plan.amounts)) return { applied: await this.resolutions.execute(plan, note, staffId) };
    const approval = await this.approvals.request({
      kind: 'bulk_resolution',
      summary: summaryOf(plan),
      ...oneMerchantOf(plan),
      amounts: plan.amounts,
      payload: { selection, note },
      requestedBy: staffId,
      note,
      // The same apply asked twice (a double click) is one request.
      key: createHash('sha256')
        .update(JSON.stringify([selection, note]))
        .digest('hex'),
    });
    if (approval.status === 'pending') return { approval };
    // Approved already and carried out: planned afresh, applying again changes nothing and answers with the orders as they are.
    return { applied: await this.resolutions.apply(selection, note, staffId) };
  }

  /** Kept small: the approval's event holds counts and sums, the orders' own events hold each resolution. */
  private async carryOut(payload: Record<string, unknown>, { requestedBy, approvedBy }: ApprovalParties): Promise<Record<string, unknown>> {
    const view = await this.resolutions.apply(payload.selection as BulkSelection, payloadText(payload, 'note'), requestedBy, approvedBy);
    return { source: view.source, report_id: view.report_id, job_id: view.job_id, counts: view.counts, amounts: view.amounts };
  }
}

function summaryOf(plan: BulkPlan): string {
  const resolving = plan.orders.filter((o) => o.kind === 'resolve');
  const success = resolving.filter((o) => o.outcome === 'success').length;
  const from = plan.selection.source === 'report' ? `report ${plan.selection.reportId}` : `re-query job ${plan.selection.jobId}`;
  const sums = plan.amounts.map((a) => `${formatAmount(a.amount)} ${a.currency}`).join(', ');
  return `Resolve ${resolving.length} orders from ${from}: ${success} as success, ${resolving.length - success} as failed (${sums})`;
}

/** The merchant, when every order resolved belongs to one. */
function oneMerchantOf(plan: BulkPlan): { merchantId?: string } {
  const merchants = new Set(plan.orders.flatMap((o) => (o.kind === 'resolve' && o.merchantId !== null ? [o.merchantId] : [])));
  return merchants.size === 1 ? { merchantId: [...merchants][0] } : {};
}
