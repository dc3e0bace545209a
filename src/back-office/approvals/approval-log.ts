import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { handleCommand, loadAggregate, Loaded } from '../../ledger/command-handling';
import { decodeEvent } from '../../ledger/event-codec';
import { EVENT_STORE, EventStore, NO_STREAM, START } from '../../ledger/ports/event-store.port';
import { APPROVAL_STREAM_PREFIX, approvalStream } from '../../ledger/streams';
import { CommandRefusedError } from '../../shared/command-refused';
import { fold } from '../../shared/decider';
import { ApprovalCommand, approvalDecider, ApprovalEvent, ApprovalState } from './approval.decider';
import { ApprovalRecord, recordOf } from './approval.view';
import { ApprovalsRepository } from './approvals.repository';

/** Events per read of the log, and approval streams per read of the streams, when the rows are rebuilt. */
const REBUILD_BATCH = 1000;

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

  /**
   * Every row written again from the approval streams, for a table lost or
   * in doubt: one pass over the log finds the approval streams (the log keeps
   * no list of streams by name), then each row is brought up to its stream.
   * A row is never taken back to an older revision, so this is safe while
   * the service runs. Returns how many approvals the log holds.
   */
  async rebuildRows(): Promise<number> {
    const ids = new Set<string>();
    for (let position = START; ;) {
      const events = await this.store.readAll(position, REBUILD_BATCH);
      for (const e of events) if (e.streamId.startsWith(APPROVAL_STREAM_PREFIX)) ids.add(e.streamId.slice(APPROVAL_STREAM_PREFIX.length));
      if (events.length < REBUILD_BATCH) break;
      position = events[events.length - 1].position;
    }
    const all = [...ids];
    for (let i = 0; i < all.length; i += REBUILD_BATCH) {
      for (const loaded of await this.loadAll(all.slice(i, i + REBUILD_BATCH))) await this.sync(loaded);
    }
    return all.length;
  }

  /** Writes the row as of the loaded stream (nothing for a stream that does not exist). */
  async sync({ state, revision }: Loaded<ApprovalState>): Promise<ApprovalRecord | undefined> {
    if (state.stage === 'none' || revision === NO_STREAM || revision === 'any') return undefined;
    const record = recordOf(state, Number(revision));
    await this.rows.save(record);
    return record;
  }
}

/** The rows rebuilt from the log outside the service (the CLI's rebuild-approvals): ApprovalLog.rebuildRows. */
export const rebuildApprovalRows = (pool: Pool, store: EventStore): Promise<number> => new ApprovalLog(store, new ApprovalsRepository(pool)).rebuildRows();
