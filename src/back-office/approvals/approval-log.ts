import { Inject, Injectable } from '@nestjs/common';
import { handleCommand, loadAggregate, Loaded } from '../../ledger/command-handling';
import { decodeEvent } from '../../ledger/event-codec';
import { EVENT_STORE, EventStore, NO_STREAM } from '../../ledger/ports/event-store.port';
import { approvalStream } from '../../ledger/streams';
import { CommandRefusedError } from '../../shared/command-refused';
import { fold } from '../../shared/decider';
import { ApprovalCommand, approvalDecider, ApprovalEvent, ApprovalState } from './approval.decider';
import { ApprovalRecord, recordOf } from './approval.view';
import { ApprovalsRepository } from './approvals.repository';

/**
 * An approval's stream and its inbox row together: every decision is an
 * append to the stream with the expected revision, then the row is written
 * as of the new revision. The stream is the record. A crash between the two
 * leaves the row behind its stream, never ahead of it; the sweep
 * (approval-inbox.ts) brings it up to date.
 */
@Injectable()
export class ApprovalLog {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly rows: ApprovalsRepository,
  ) {}

  load(approvalId: string): Promise<Loaded<ApprovalState>> {
    return loadAggregate(this.store, approvalStream(approvalId), approvalDecider);
  }

  /** Several approvals in one read, in the order of the ids (a missing one as no stream). */
  async loadAll(approvalIds: readonly string[]): Promise<Loaded<ApprovalState>[]> {
    const streams = await this.store.readStreams(approvalIds.map(approvalStream));
    return streams.map((events) => ({
      state: fold(
        approvalDecider,
        events.map((e) => decodeEvent<ApprovalEvent>(e)),
      ),
      revision: events.length === 0 ? NO_STREAM : events[events.length - 1].revision,
    }));
  }

  /**
   * A new request: its row is reserved first (unlisted until the stream has
   * the request), so that no request reaches the log without a row the sweep
   * would look at; then the stream is claimed (expected: no stream).
   */
  async request(command: Extract<ApprovalCommand, { type: 'RequestApproval' }>): Promise<Loaded<ApprovalState>> {
    const fresh = approvalDecider.initialState();
    const decision = approvalDecider.decide(command, fresh);
    if (decision.ok) {
      const pending = decision.events.reduce(approvalDecider.evolve, fresh);
      if (pending.stage !== 'none') await this.rows.reserve(recordOf(pending, -1));
    }
    return this.decide(command.approvalId, command, { state: fresh, revision: NO_STREAM });
  }

  /**
   * Decides the command on the stream and appends; a refusal is thrown as a
   * CommandRefusedError after the row is brought up to what the stream says.
   */
  async decide(approvalId: string, command: ApprovalCommand, known?: Loaded<ApprovalState>): Promise<Loaded<ApprovalState>> {
    const handled = await handleCommand(this.store, approvalStream(approvalId), approvalDecider, command, known);
    await this.sync(handled);
    if (!handled.decision.ok) throw new CommandRefusedError(handled.decision.refusal.code, handled.decision.refusal.message);
    return { state: handled.state, revision: handled.revision };
  }

  /** Writes the row as of the loaded stream (nothing for a stream that does not exist). */
  async sync({ state, revision }: Loaded<ApprovalState>): Promise<ApprovalRecord | undefined> {
    if (state.stage === 'none' || revision === NO_STREAM || revision === 'any') return undefined;
    const record = recordOf(state, Number(revision));
    await this.rows.save(record);
    return record;
  }
}
