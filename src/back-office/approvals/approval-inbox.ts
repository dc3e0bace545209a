import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../config/config';
import { ApiError } from '../../infrastructure/http/api-error';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { CLOCK } from '../../ledger/ledger.tokens';
import { Clock } from '../../shared/clock';
import type { StaffMember, StaffRole } from '../auth/staff-member';
import { DisplayNames } from '../display-names/display-names';
import { AuditTrail } from '../staff-audit-trail/audit-trail';
import { APPROVAL_KINDS, ApprovalKind, ApprovalState } from './approval.decider';
import { ApprovalGate } from './approval-gate';
import { ApprovalLog } from './approval-log';
import { APPROVAL_STATUSES, ApprovalPageView, ApprovalStatus, approvalView, ApprovalView, namedIn } from './approval.view';
import { ApprovalsRepository } from './approvals.repository';

/**
 * The kinds each role sees: reconcilers the resolutions they decide and the
 * adjustments they ask for, admins and auditors (read-only) everything.
 */
const VISIBLE_KINDS: Record<StaffRole, readonly ApprovalKind[]> = {
  admin: APPROVAL_KINDS,
  auditor: APPROVAL_KINDS,
  reconciler: ['resolution', 'bulk_resolution', 'adjustment'],
};

/** A list sweeps at most this often per instance: the inbox is read by people, the sweep reads every unsettled stream. */
const LIST_SWEEP_EVERY_MS = 1000;
/** Unsettled approvals one sweep looks at, oldest first. */
const SWEEP_BATCH = 500;
/** A row reserved for a request that has not reached the log this long after is a request that never will (its caller saw an error). */
const RESERVATION_GRACE_MS = 60_000;

export interface ApprovalListFilter {
  status: ApprovalStatus | 'all';
  kind?: ApprovalKind;
  limit: number;
  offset: number;
}

export interface SweepReport {
  /** Rows brought up to their stream. */
  synced: number;
  /** Approved requests carried out. */
  carriedOut: number;
  /** Reserved rows whose request never reached the log. */
  forgotten: number;
}

/**
 * The requests staff decide: the list, one request, approve and reject, and
 * the sweep that finishes what a crash interrupted. A request approved and
 * not yet carried out (the process died between ApprovalGranted and the
 * movement) is carried out by the sweep, at start-up, on an interval and
 * before a list, or by its approver approving it again; each kind's executor
 * is idempotent, so the money moves once.
 */
@Injectable()
export class ApprovalInbox implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Approvals');
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<SweepReport>;
  private lastSweep = 0;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'orderRecoveryIntervalMs'>,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly gate: ApprovalGate,
    private readonly log: ApprovalLog,
    private readonly rows: ApprovalsRepository,
    private readonly names: DisplayNames,
    private readonly audit: AuditTrail,
  ) {}

  async page(staff: StaffMember, filter: ApprovalListFilter): Promise<ApprovalPageView> {
    if (Date.now() - this.lastSweep >= LIST_SWEEP_EVERY_MS) await this.sweepQuietly();
    const visible = VISIBLE_KINDS[staff.role];
    const { total, records } = await this.rows.page({
      statuses: filter.status === 'all' ? APPROVAL_STATUSES : [filter.status],
      kinds: filter.kind === undefined ? visible : visible.filter((k) => k === filter.kind),
      limit: filter.limit,
      offset: filter.offset,
    });
    const names = await this.names.of(namedIn(records));
    return { total, approvals: records.map((r) => approvalView(r, names)) };
  }

  /** One request, from its stream: what was just decided shows at once, on any instance. */
  async one(staff: StaffMember, approvalId: string): Promise<ApprovalView> {
    const loaded = await this.log.load(approvalId);
    this.mayRead(staff, loaded.state);
    return this.gate.view(loaded.state);
  }

  async approve(staff: StaffMember, approvalId: string, note: string): Promise<ApprovalView> {
    const loaded = await this.log.load(approvalId);
    this.mayRead(staff, loaded.state);
    // The approver again, after their approval was recorded and before its movement was (a retry after an error or a crash): carry it out.
    if (loaded.state.stage === 'granted' && loaded.state.granted.by === staff.staffId) return this.carriedOut(approvalId);
    await this.log.decide(approvalId, { type: 'GrantApproval', by: staff.staffId, role: staff.role, note, at: this.clock.now() }, loaded);
    await this.audit.record({ staffId: staff.staffId, action: 'approval.granted', target: `approval:${approvalId}`, details: { note } });
    return this.carriedOut(approvalId);
  }

  async reject(staff: StaffMember, approvalId: string, note: string): Promise<ApprovalView> {
    const loaded = await this.log.load(approvalId);
    this.mayRead(staff, loaded.state);
    const rejected = await this.log.decide(approvalId, { type: 'RejectApproval', by: staff.staffId, role: staff.role, note, at: this.clock.now() }, loaded);
    await this.audit.record({ staffId: staff.staffId, action: 'approval.rejected', target: `approval:${approvalId}`, details: { note } });
    return this.gate.view(rejected.state);
  }

  /**
   * Brings the rows a crash may have left behind up to their streams, carries
   * out what was approved and not yet carried out, and drops the rows of
   * requests that never reached the log.
   */
  async sweep(): Promise<SweepReport> {
    this.lastSweep = Date.now();
    const report: SweepReport = { synced: 0, carriedOut: 0, forgotten: 0 };
    const rows = await this.rows.unsettled(SWEEP_BATCH);
    if (rows.length === 0) return report;
    const streams = await this.log.loadAll(rows.map((r) => r.approvalId));
    for (const [i, row] of rows.entries()) {
      const loaded = streams[i];
      if (loaded.state.stage === 'none') {
        if (row.revision < 0 && Date.now() - row.writtenAt.getTime() > RESERVATION_GRACE_MS) {
          await this.rows.forget(row.approvalId);
          report.forgotten++;
        }
        continue;
      }
      if (Number(loaded.revision) > row.revision) {
        await this.log.sync(loaded);
        report.synced++;
      }
      if (loaded.state.stage === 'granted') {
        // One that fails unexpectedly (the database, a missing executor) stays approved for the next sweep; the others go on.
        try {
          await this.gate.carryOut(row.approvalId);
          report.carriedOut++;
        } catch (error) {
          this.logger.warn(`approval ${row.approvalId} could not be carried out yet: ${String(error)}`);
        }
      }
    }
    return report;
  }

  onApplicationBootstrap(): void {
    const tick = () => {
      void this.sweepQuietly().finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, this.config.orderRecoveryIntervalMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.sweeping;
  }

  /** One sweep at a time per instance; a failed sweep is logged, and the next one tries again. */
  private sweepQuietly(): Promise<SweepReport | undefined> {
    this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    return this.sweeping
      .then((report) => {
        if (report.carriedOut + report.forgotten > 0)
          this.logger.log(`sweep: carried out ${report.carriedOut} approved requests, dropped ${report.forgotten} never recorded`);
        return report;
      })
      .catch((error: unknown) => {
        this.logger.warn(`sweep failed: ${String(error)}`);
        return undefined;
      });
  }

  private async carriedOut(approvalId: string): Promise<ApprovalView> {
    return this.gate.view((await this.gate.carryOut(approvalId)).state);
  }

  /** A request of a kind the staff member's role does not see is refused like a route it may not call. */
  private mayRead(staff: StaffMember, state: ApprovalState): void {
    if (state.stage === 'none') throw new ApiError(404, 'APPROVAL_NOT_FOUND', 'No such approval');
    if (!VISIBLE_KINDS[staff.role].includes(state.request.kind)) {
      throw new ApiError(403, 'FORBIDDEN', `A ${staff.role} may not see ${state.request.kind} approvals`);
    }
  }
}
