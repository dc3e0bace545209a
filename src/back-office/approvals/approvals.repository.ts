import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { PG_POOL } from '../../infrastructure/infrastructure.tokens';
import { isoTimestamp } from '../../shared/clock';
import { ApprovalKind } from './approval.decider';
import { ApprovalRecord, ApprovalStatus } from './approval.view';

interface ApprovalRow {
  approval_id: string;
  revision: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  summary: string;
  merchant_id: string | null;
  amounts: ApprovalRecord['amounts'];
  payload: Record<string, unknown>;
  requested_by: string;
  requested_at: Date;
  note: string;
  decided_by: string | null;
  decided_at: Date | null;
  decision_note: string | null;
  carried_out_at: Date | null;
  result: ApprovalRecord['result'];
  written_at: Date;
}

const COLUMNS = `approval_id, revision, kind, status, summary, merchant_id, amounts, payload, requested_by, requested_at, note,
  decided_by, decided_at, decision_note, carried_out_at, result`;

const time = (date: Date | null) => (date === null ? null : isoTimestamp(date));

const recordOfRow = (r: ApprovalRow): ApprovalRecord => ({
  approvalId: r.approval_id,
  revision: Number(r.revision),
  kind: r.kind,
  status: r.status,
  summary: r.summary,
  merchantId: r.merchant_id,
  amounts: r.amounts,
  payload: r.payload,
  requestedBy: r.requested_by,
  requestedAt: isoTimestamp(r.requested_at),
  note: r.note,
  decidedBy: r.decided_by,
  decidedAt: time(r.decided_at),
  decisionNote: r.decision_note,
  carriedOutAt: time(r.carried_out_at),
  result: r.result,
});

const valuesOf = (r: ApprovalRecord) => [
  r.approvalId,
  r.revision,
  r.kind,
  r.status,
  r.summary,
  r.merchantId,
  JSON.stringify(r.amounts),
  JSON.stringify(r.payload),
  r.requestedBy,
  r.requestedAt,
  r.note,
  r.decidedBy,
  r.decidedAt,
  r.decisionNote,
  r.carriedOutAt,
  r.result === null ? null : JSON.stringify(r.result),
];

const INSERT = `insert into approvals (${COLUMNS}) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

export interface ApprovalFilter {
  statuses: readonly ApprovalStatus[];
  kinds: readonly ApprovalKind[];
  limit: number;
  offset: number;
}

/** A row the sweep looks at, with when it was last written. */
export type UnsettledApproval = ApprovalRecord & { writtenAt: Date };

/** The approvals inbox's one table (approvals.migrations.ts): read and written here only. */
@Injectable()
export class ApprovalsRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** The row of a request about to be appended, so that no request can reach the log and be missing here. */
  async reserve(record: ApprovalRecord): Promise<void> {
    await this.pool.query(`${INSERT} on conflict (approval_id) do nothing`, valuesOf({ ...record, revision: -1 }));
  }

  /** The row as of the stream's revision: never older than what it holds, whatever order two writers finish in. */
  async save(record: ApprovalRecord): Promise<void> {
    await this.pool.query(
      `${INSERT}
       on conflict (approval_id) do update set
         revision = excluded.revision, status = excluded.status, decided_by = excluded.decided_by, decided_at = excluded.decided_at,
         decision_note = excluded.decision_note, carried_out_at = excluded.carried_out_at, result = excluded.result, written_at = now()
       where approvals.revision < excluded.revision`,
      valuesOf(record),
    );
  }

  /** Newest first, requests still waiting before the rest; rows not yet confirmed by the log are left out. */
  async page({ statuses, kinds, limit, offset }: ApprovalFilter): Promise<{ total: number; records: ApprovalRecord[] }> {
    const where = `revision >= 0 and status = any($1::text[]) and kind = any($2::text[])`;
    const [page, count] = await Promise.all([
      this.pool.query<ApprovalRow>(
        `select ${COLUMNS} from approvals where ${where}
         order by status <> 'pending', requested_at desc, approval_id desc limit $3 offset $4`,
        [statuses, kinds, limit, offset],
      ),
      this.pool.query<{ n: number }>(`select count(*)::int as n from approvals where ${where}`, [statuses, kinds]),
    ]);
    return { total: count.rows[0].n, records: page.rows.map(recordOfRow) };
  }

  /** Requests waiting, approved and not yet carried out, or not yet confirmed: what a crash may have left behind its stream. */
  async unsettled(limit: number): Promise<UnsettledApproval[]> {
    const { rows } = await this.pool.query<ApprovalRow>(
      `select ${COLUMNS}, written_at from approvals
       where status = 'pending' or (status = 'approved' and carried_out_at is null) or revision < 0
       order by requested_at limit $1`,
      [limit],
    );
    return rows.map((r) => ({ ...recordOfRow(r), writtenAt: r.written_at }));
  }

  /** A reserved row whose request never reached the log. */
  async forget(approvalId: string): Promise<void> {
    await this.pool.query('delete from approvals where approval_id = $1 and revision < 0', [approvalId]);
  }
}
