import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/config';
import { ApiError } from '../../infrastructure/http/api-error';
import { APP_CONFIG } from '../../infrastructure/infrastructure.tokens';
import { Loaded } from '../../ledger/command-handling';
import { CLOCK } from '../../ledger/ledger.tokens';
import { Clock } from '../../shared/clock';
import { CommandRefusedError } from '../../shared/command-refused';
import { Minor } from '../../shared/money';
import { DisplayNames } from '../display-names/display-names';
import { AuditTrail } from '../staff-audit-trail/audit-trail';
import { ApprovalKind, ApprovalResult, ApprovalState } from './approval.decider';
import { ApprovalLog } from './approval-log';
import { approvalView, ApprovalView, namedIn, recordOf } from './approval.view';

export interface ApprovalRequest {
  kind: ApprovalKind;
  /** One line for the inbox: "Resolve 312 orders from report R-… as in the proposals". */
  summary: string;
  /** Absent for a bulk action over several merchants. */
  merchantId?: string;
  /** What would move, per currency. */
  amounts: { currency: string; amount: Minor }[];
  /** JSON: what the executor needs (amounts as "12.50"). */
  payload: Record<string, unknown>;
  /** Staff id. */
  requestedBy: string;
  note: string;
  /**
   * What makes two requests the same one (a deposit's reference, an order
   * number), for routes that are idempotent: while a request with this kind
   * and key waits, the same request again gets the waiting one, another
   * request under the key is refused (409 APPROVAL_PENDING); once approved,
   * `request` answers with the approved one, whose action is safe to repeat
   * (it changes nothing more); after a rejection the key may be asked again.
   * Without a key every request is a new one.
   */
  key?: string;
}

/** Who asked and who approved: the executor passes both on to the command, which records them in its event. */
export interface ApprovalParties {
  requestedBy: string;
  approvedBy: string;
}

/**
 * Carries out an approved request of one kind. A refusal of the ledger
 * (CommandRefusedError, or an ApiError under 500) is recorded as the
 * approval's result and ends it; any other error leaves the approval to be
 * carried out again (approval-inbox.ts sweeps), so an executor must be safe to
 * run twice: the same deposit or adjustment reference, an order's own state.
 */
export type ApprovalExecutor = (payload: Record<string, unknown>, who: ApprovalParties) => Promise<Record<string, unknown>>;

/** After this many rejected or failed requests under one key, something is wrong: refuse rather than loop. */
const MAX_ROUNDS = 1000;

/**
 * The four-eyes rule (APPROVAL_THRESHOLD): whether a movement needs a second
 * person, the request that then stands in for it, and how an approved request
 * is carried out (each kind's executor, registered by the slice that owns the
 * kind). Deciding requests is approval-inbox.ts.
 */
@Injectable()
export class ApprovalGate {
  private readonly logger = new Logger('Approvals');
  private readonly executors = new Map<ApprovalKind, ApprovalExecutor>();
  /** Approvals being carried out by this instance: a second caller waits for the first rather than running the executor alongside it. */
  private readonly carrying = new Map<string, Promise<Loaded<ApprovalState>>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'approvalThreshold'>,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly log: ApprovalLog,
    private readonly names: DisplayNames,
    private readonly audit: AuditTrail,
  ) {}

  /** Whether the rule is on at all (APPROVAL_THRESHOLD is set): without it nothing ever waits, and a route need not even look. */
  get active(): boolean {
    return this.config.approvalThreshold !== undefined;
  }

  /** Whether these amounts need a second person: any of them greater than the threshold, in its own currency. */
  needsApproval(amounts: readonly { currency: string; amount: Minor }[]): boolean {
    const threshold = this.config.approvalThreshold;
    return threshold !== undefined && amounts.some((a) => a.amount > threshold);
  }

  registerExecutor(kind: ApprovalKind, execute: ApprovalExecutor): void {
    if (this.executors.has(kind)) throw new Error(`an executor for ${kind} approvals is registered already`);
    this.executors.set(kind, execute);
  }

  /** Records the request (an event) and returns the view to answer 202 with; with a key, possibly an earlier request (see `key`). */
  async request(request: ApprovalRequest): Promise<ApprovalView> {
    const { key, ...asked } = request;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const approvalId = key === undefined ? randomApprovalId() : keyedApprovalId(request.kind, key, round);
      let existing = await this.log.load(approvalId);
      if (existing.state.stage === 'none') {
        const claimed = await this.claim(approvalId, asked);
        if (claimed) return this.view(claimed.state);
        existing = await this.log.load(approvalId); // someone claimed it meanwhile: the same request, sent twice at once
      }
      if (key === undefined) continue; // a random id taken: draw another
      await this.log.sync(existing);
      let state: ApprovalState = existing.state;
      // Approved: carried out before the caller repeats its action, so the movement's event names its approver.
      if (state.stage === 'granted') state = (await this.carryOut(approvalId)).state;
      if (state.stage === 'rejected' || (state.stage === 'carried_out' && !state.result.ok)) continue; // that one is over: ask anew
      if (state.stage === 'pending' && !sameRequest(state.request, request)) {
        throw new ApiError(409, 'APPROVAL_PENDING', `Another request (${approvalId}) for the same thing waits for approval: approve or reject it first`);
      }
      return this.view(state);
    }
    throw new Error(`more than ${MAX_ROUNDS} requests under one key`);
  }

  /** Appends the request under the id; undefined when the id was taken meanwhile. */
  private async claim(approvalId: string, asked: Omit<ApprovalRequest, 'key'>): Promise<Loaded<ApprovalState> | undefined> {
    try {
      const recorded = await this.log.request({ type: 'RequestApproval', approvalId, ...asked, at: this.clock.now() });
      await this.audit.record({
        staffId: asked.requestedBy,
        action: 'approval.requested',
        target: `approval:${approvalId}`,
        details: { kind: asked.kind, summary: asked.summary },
      });
      return recorded;
    } catch (error) {
      if (error instanceof CommandRefusedError && error.code === 'APPROVAL_EXISTS') return undefined;
      throw error;
    }
  }

  /**
   * Carries out an approved request: its kind's executor, then the result
   * recorded (once) as ApprovalCarriedOut. A request already carried out, or
   * not approved, is returned as it stands.
   */
  carryOut(approvalId: string): Promise<Loaded<ApprovalState>> {
    const running = this.carrying.get(approvalId);
    if (running) return running;
    const carrying = this.execute(approvalId).finally(() => this.carrying.delete(approvalId));
    this.carrying.set(approvalId, carrying);
    return carrying;
  }

  private async execute(approvalId: string): Promise<Loaded<ApprovalState>> {
    const loaded = await this.log.load(approvalId);
    if (loaded.state.stage !== 'granted') return loaded;
    const { request, granted } = loaded.state;
    const executor = this.executors.get(request.kind);
    if (!executor) throw new Error(`no executor is registered for ${request.kind} approvals`);
    let result: ApprovalResult;
    try {
      result = { ok: true, detail: await executor(request.payload, { requestedBy: request.requestedBy, approvedBy: granted.by }) };
    } catch (error) {
      const refusal = refusalOf(error);
      if (!refusal) throw error;
      this.logger.warn(`approval ${approvalId} (${request.kind}) was granted, and the ledger refused it: ${refusal.code}`);
      result = { ok: false, ...refusal };
    }
    return this.log.decide(approvalId, { type: 'RecordCarriedOut', result, at: this.clock.now() });
  }

  /** The view of an approval as loaded. */
  async view(state: ApprovalState): Promise<ApprovalView> {
    if (state.stage === 'none') throw new ApiError(404, 'APPROVAL_NOT_FOUND', 'No such approval');
    const record = recordOf(state, 0);
    return approvalView(record, await this.names.of(namedIn([record])));
  }
}

/** A business refusal, as the approval records it; undefined for anything unexpected. */
function refusalOf(error: unknown): { code: string; message: string } | undefined {
  if (error instanceof CommandRefusedError) return { code: error.code, message: error.message };
  if (error instanceof ApiError && error.status < 500) return { code: error.code, message: error.message };
  return undefined;
}

/** The same request again: same kind, merchant, amounts and payload (the note may differ). */
function sameRequest(earlier: { merchantId?: string; amounts: { currency: string; amount: string }[]; payload: object }, asked: ApprovalRequest): boolean {
  const amounts = asked.amounts.map((a) => ({ currency: a.currency, amount: a.amount.toString() }));
  return (
    (earlier.merchantId ?? null) === (asked.merchantId ?? null) &&
    canonicalJson(earlier.amounts) === canonicalJson(amounts) &&
    canonicalJson(earlier.payload) === canonicalJson(asked.payload)
  );
}

/** JSON with object keys in order: a payload read back from jsonb has its keys in another order than it was written. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

const randomApprovalId = () => `apr_${randomBytes(8).toString('hex')}`;

/** The n-th request under a key always has the same id, so two identical requests meet at one stream, whichever instance takes them. */
const keyedApprovalId = (kind: ApprovalKind, key: string, round: number) =>
  `apr_${createHash('sha256').update(`topup/approval/v1\n${kind}\n${key}\n${round}`).digest('hex').slice(0, 16)}`;
