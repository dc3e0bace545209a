import { AppendResult, EventStore, LoadedEvent, NO_STREAM, StreamAppend, WrongExpectedRevisionError } from '../ports/event-store.port';
import { Decision } from '../../shared/decider';
import { Minor } from '../../shared/money';
import { encodeEvent } from '../event-codec';
import { LedgerInvariantError } from '../ledger-invariant.error';
import { walletStream } from '../streams';
import { forgetClosedHolds, settleWallet, WalletCommand, walletDecider, WalletEvent, WalletRefusalCode, WalletState } from './wallet.decider';
import { BatchDecision, decideBatch } from './wallet-batch';
import { chainEvents, openingReplay, replayEvents, WalletReplay } from './wallet-replay';
import { SliceRead, streamSlices } from './wallet-slices';

export interface WalletOutcome {
  decision: Decision<WalletEvent, WalletRefusalCode>;
  balance: Minor;
  frozen: Minor;
  /** Where the companion's events went, when the command had one and its events were appended. */
  companion?: AppendResult;
}

/**
 * Another stream's events that commit together with a command's wallet
 * events, all or nothing (an order's step and the money it moves). Appended
 * only when the command is decided with events, and only by stores that
 * append to several streams atomically. When the companion's stream
 * conflicts, the command fails with that WrongExpectedRevisionError and
 * nothing of it is appended.
 */
export type Companion = StreamAppend;

/** Events per read when a wallet is loaded or caught up. */
const LOAD_SLICE = 5000;

/** Wallets kept in memory at most, unless the options say otherwise. */
const DEFAULT_CACHED_WALLETS = 10_000;

/**
 * How long a cached wallet remembers a hold it closed: what it keeps grows
 * with the rate of orders, not with the wallet's history. Deciding a
 * command that may concern a hold forgotten (see needsWholeWallet) reads
 * the wallet whole again.
 */
const DEFAULT_CLOSED_HOLDS_KEPT_MS = 120_000;

/** How often a cached wallet that keeps being written forgets: a few times a minute, not at every append. */
const FORGET_EVERY_MS = 10_000;

/**
 * A freeze dated less than this after the latest hold forgotten is decided
 * on the wallet read whole: the margin covers the clocks of two instances
 * (a hold closes after its order was read, and the freeze is dated after
 * that read, each by its own instance's clock).
 */
const CLOCK_MARGIN_MS = 30_000;

/** Revision conflicts tolerated per batch before the commands fail (another instance keeps writing the wallet). */
const MAX_CONFLICTS = 50;

interface Pending {
  command: WalletCommand;
  companion?: Companion;
  resolve(outcome: WalletOutcome): void;
  reject(error: unknown): void;
}

interface Slot {
  queue: Pending[];
  running: boolean;
  cached?: CachedWallet;
}

/** The wallet as this instance last read or wrote it. */
interface CachedWallet extends WalletReplay<WalletState> {
  /** The latest closing time (ms) of the closed holds it forgot; undefined while it remembers every one. */
  forgottenUntil?: number;
  /** When (ms) its next append makes it forget what closed too long ago; undefined: at the next. */
  forgetAgainAt?: number;
}

/**
 * Every wallet command goes through here. Commands for one wallet queue up
 * while an append is in flight and are then decided one after the other
 * against the cached state and written as one append: a hot wallet pays one
 * round trip and one fsync per batch, not per order, and concurrent freezes
 * in one process never conflict. Another instance writing the same wallet
 * shows up as a conflict; the batch is then decided again on fresh state.
 */
export class WalletWriter {
  private readonly slots = new Map<string, Slot>();

  constructor(
    private readonly store: EventStore,
    private readonly options: {
      maxBatch?: number;
      cachedWallets?: number;
      /** How long a cached wallet remembers a closed hold (DEFAULT_CLOSED_HOLDS_KEPT_MS). */
      closedHoldsKeptMs?: number;
      /** The clock that ages closed holds (tests set their own). */
      nowMs?: () => number;
      onBatch?: (size: number) => void;
      /** A batch's append lost to another writer of the wallet (another instance) and is decided again. */
      onConflict?: () => void;
      /** A wallet was read whole (its first command, or warm): the events replayed and the seconds it took. */
      onLoad?: (events: number, seconds: number) => void;
    } = {},
  ) {}

  /** Whether commands can carry a companion (the store appends to several streams atomically). */
  get takesCompanions(): boolean {
    return typeof this.store.appendAtomically === 'function';
  }

  execute(merchantId: string, command: WalletCommand, companion?: Companion): Promise<WalletOutcome> {
    if (companion && !this.takesCompanions) return Promise.reject(new Error('this event store cannot append a companion atomically'));
    const slot = this.slots.get(merchantId) ?? this.newSlot(merchantId);
    const promise = new Promise<WalletOutcome>((resolve, reject) => slot.queue.push({ command, companion, resolve, reject }));
    if (!slot.running) void this.drain(merchantId, slot);
    return promise;
  }

  private newSlot(merchantId: string): Slot {
    const slot: Slot = { queue: [], running: false };
    this.slots.set(merchantId, slot);
    this.evictIdle();
    return slot;
  }

  /**
   * Loads these wallets before their first command (at start-up, before the
   * instance takes requests): a long-lived wallet's first load replays its
   * whole history, and every command for it waits meanwhile. A command that
   * arrives during the load waits for it as it would for its own. Wallets
   * already cached or in use are left alone, and no more are loaded than the
   * writer keeps. Returns the wallets found and the events replayed; the
   * first read that fails stops the rest and rejects, and an abort stops
   * the rest after the loads under way.
   */
  async warm(merchantIds: readonly string[], options: { concurrency?: number; signal?: AbortSignal } = {}): Promise<{ wallets: number; events: bigint }> {
    const queue = merchantIds.slice(0, this.options.cachedWallets ?? DEFAULT_CACHED_WALLETS);
    let wallets = 0;
    let events = 0n;
    let failure: unknown;
    const loadNext = async (): Promise<void> => {
      for (let merchantId = queue.shift(); merchantId !== undefined && failure === undefined && !options.signal?.aborted; merchantId = queue.shift()) {
        if (this.slots.has(merchantId)) continue;
        const slot: Slot = { queue: [], running: true };
        this.slots.set(merchantId, slot);
        this.evictIdle();
        try {
          slot.cached = await this.load(merchantId);
          if (slot.cached.revision >= 0n) wallets++;
          events += slot.cached.revision + 1n;
        } catch (error) {
          failure ??= error;
        } finally {
          slot.running = false;
          if (slot.queue.length > 0) void this.drain(merchantId, slot);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 2) }, loadNext));
    if (failure !== undefined) throw failure;
    return { wallets, events };
  }

  private async drain(merchantId: string, slot: Slot): Promise<void> {
    slot.running = true;
    while (slot.queue.length > 0) {
      const batch = slot.queue.splice(0, this.options.maxBatch ?? 500);
      this.options.onBatch?.(batch.length);
      try {
        await this.writeBatch(merchantId, slot, batch);
      } catch (error) {
        slot.cached = undefined;
        for (const pending of batch) pending.reject(error);
      }
    }
    slot.running = false;
  }

  /**
   * Decides the batch on the cached wallet and appends its events, until
   * they land or fail: decide (decideBatch: the cache stays as it is), then
   * append; on a conflict, either a companion's stream conflicted (that
   * command alone fails, and the rest are decided again) or the wallet's
   * (the batch is decided again on the wallet caught up).
   */
  private async writeBatch(merchantId: string, slot: Slot, batch: Pending[]): Promise<void> {
    // Whether the cached wallet is known to be the wallet's latest, not just this instance's.
    let current = false;
    // Whether the batch is decided on the wallet with every hold it ever closed.
    let whole = false;
    if (!slot.cached) {
      slot.cached = await this.load(merchantId);
      current = true;
    }
    for (let conflicts = 0; batch.length > 0;) {
      const decidedOn = slot.cached;
      const decided = decideBatch(decidedOn.state, batch);
      if (!whole && needsWholeWallet(decidedOn, batch, decided)) {
        slot.cached = await this.load(merchantId, { whole: (whole = true) });
        current = true;
        continue;
      }
      // A refusal appends nothing, so no expected revision vouches for the
      // state it was decided on: a cached wallet may be behind another
      // instance's writes. Refuse only on the wallet's current revision.
      if (!current && refusesWritingNothing(decided)) {
        slot.cached = await this.catchUp(merchantId, decidedOn, whole);
        current = true;
        if (slot.cached.revision > decidedOn.revision) continue;
      }
      const appended = await this.append(merchantId, decidedOn, decided, batch);
      if (!(appended instanceof WrongExpectedRevisionError)) {
        slot.cached = appended.wallet;
        reply(batch, decided, appended.companions);
        return;
      }
      // Nothing of the batch was written, and the cached wallet is as it was: the decision is dropped.
      if (this.failOnCompanionConflict(batch, decided, appended)) continue;
      slot.cached = await this.catchUpAfterConflict(merchantId, decidedOn, ++conflicts, appended, whole);
      current = true;
    }
  }

  /**
   * The batch's events chained onto the wallet decided on and appended with
   * its revision as the one expected: alone, or atomically with the
   * companions of the commands decided with events. Returns the wallet
   * after (the decided one, settled) and the companions' results; a batch
   * without events appends nothing. A stream that conflicted comes back as
   * the conflict, and nothing of the batch was written.
   */
  private async append(
    merchantId: string,
    decidedOn: CachedWallet,
    { events, companions, after }: BatchDecision<Companion>,
    batch: readonly Pending[],
  ): Promise<{ wallet: CachedWallet; companions: AppendResult[] } | WrongExpectedRevisionError> {
    if (events.length === 0) return { wallet: decidedOn, companions: [] };
    const streamId = walletStream(merchantId);
    const { revision, hash } = decidedOn;
    const { chained, head } = chainEvents(
      hash,
      revision + 1n,
      events.map((event) => encodeEvent(event)),
    );
    const expected = revision < 0n ? NO_STREAM : revision;
    try {
      const appendAtomically = this.store.appendAtomically?.bind(this.store);
      // execute refuses companions for a store that cannot append them atomically: none reach here.
      if (companions.length > 0 && !appendAtomically) throw new LedgerInvariantError('a companion for a store that appends one stream at a time');
      const [wallet, ...companionResults] =
        companions.length === 0 || !appendAtomically
          ? [await this.store.append(streamId, chained, expected)]
          : await appendAtomically([{ streamId, events: chained, expected }, ...companions.map((c) => c.companion)], {
              // A freeze is a merchant's submit waiting for its reply.
              replyWaits: batch.some((pending) => pending.command.type === 'FreezeFunds'),
            });
      const state = settleWallet(after);
      const { forgottenUntil, forgetAgainAt } = decidedOn;
      const cached = this.forgetOld({ state, revision: wallet.nextExpectedRevision, hash: head, forgottenUntil, forgetAgainAt });
      return { wallet: cached, companions: companionResults };
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) return error;
      throw error;
    }
  }

  /**
   * A companion's stream conflicted, not the wallet's: that command alone
   * fails with the conflict and leaves the batch, for the rest to be
   * decided again. False when the conflict is the wallet's.
   */
  private failOnCompanionConflict(batch: Pending[], decided: BatchDecision<Companion>, conflict: WrongExpectedRevisionError): boolean {
    const clash = decided.companions.find((c) => c.companion.streamId === conflict.streamId);
    if (!clash) return false;
    const [failed] = batch.splice(clash.index, 1);
    failed.reject(conflict);
    return true;
  }

  /**
   * Another instance wrote this wallet: the wallet after its writes, for the
   * batch to be decided again, unless it has lost MAX_CONFLICTS times
   * already (the conflict is then thrown). Instances retrying in lockstep
   * would keep colliding: wait a random, growing moment first. Then read
   * only what it wrote, not the wallet's whole history again.
   */
  private async catchUpAfterConflict(
    merchantId: string,
    decidedOn: CachedWallet,
    conflicts: number,
    conflict: WrongExpectedRevisionError,
    whole: boolean,
  ): Promise<CachedWallet> {
    this.options.onConflict?.();
    if (conflicts > MAX_CONFLICTS) throw conflict;
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** conflicts, 50)));
    return this.catchUp(merchantId, decidedOn, whole);
  }

  /** The wallet read from its first event; `whole`: remembering every hold it closed, for the decision at hand. */
  private async load(merchantId: string, { whole = false } = {}): Promise<CachedWallet> {
    const started = performance.now();
    const loaded = await this.catchUp(merchantId, openingReplay(walletDecider.initialState()), whole);
    this.options.onLoad?.(Number(loaded.revision + 1n), (performance.now() - started) / 1000);
    return loaded;
  }

  /**
   * The wallet after the events that follow `replay` in its stream, read a
   * slice at a time with only what deciding and chaining need
   * (readStreamForLoad): a long-lived wallet's first load is its whole
   * history, and the slices after the first are read while the one before
   * is replayed.
   */
  private async catchUp(merchantId: string, replay: CachedWallet, whole: boolean): Promise<CachedWallet> {
    let caughtUp = replay;
    const read: SliceRead<LoadedEvent> = (...slice) => this.store.readStreamForLoad(...slice);
    for await (const slice of streamSlices(read, walletStream(merchantId), replay.revision, { sliceSize: LOAD_SLICE })) {
      const replayed = replayEvents(caughtUp, slice, walletDecider.evolve);
      const next = { ...replayed, forgottenUntil: caughtUp.forgottenUntil };
      caughtUp = whole ? next : this.forgetOld(next);
    }
    return caughtUp;
  }

  /** The cached wallet without the holds it closed longer ago than it remembers them (once in FORGET_EVERY_MS). */
  private forgetOld(wallet: CachedWallet): CachedWallet {
    const now = (this.options.nowMs ?? Date.now)();
    if (wallet.forgetAgainAt !== undefined && now < wallet.forgetAgainAt) return wallet;
    const forgot = forgetClosedHolds(wallet.state, now - (this.options.closedHoldsKeptMs ?? DEFAULT_CLOSED_HOLDS_KEPT_MS));
    const forgottenUntil = forgot === undefined ? wallet.forgottenUntil : Math.max(forgot, wallet.forgottenUntil ?? forgot);
    return { ...wallet, forgottenUntil, forgetAgainAt: now + FORGET_EVERY_MS };
  }

  private evictIdle(): void {
    const limit = this.options.cachedWallets ?? DEFAULT_CACHED_WALLETS;
    for (const [merchantId, slot] of this.slots) {
      if (this.slots.size <= limit) return;
      if (!slot.running && slot.queue.length === 0) this.slots.delete(merchantId);
    }
  }
}

/**
 * Whether a batch decided on a wallet that forgot closed holds may have
 * been decided wrongly for want of one: a deduction or release refused
 * NOT_FROZEN (the hold may be one forgotten, to be refused ALREADY_*), or a
 * freeze dated before the latest hold forgotten, give or take the clocks'
 * margin (a freeze again of a hold closed since its order was read, to be
 * refused ALREADY_FROZEN). A freeze dated later cannot be of a hold
 * forgotten: it is dated just after its order was read as placed, and a
 * hold closes only once its order has moved on from that.
 */
function needsWholeWallet(wallet: CachedWallet, batch: readonly Pending[], { outcomes }: BatchDecision<unknown>): boolean {
  const { forgottenUntil } = wallet;
  if (forgottenUntil === undefined) return false;
  return batch.some(({ command }, i) => {
    if (command.type === 'FreezeFunds') return !(Date.parse(command.at) > forgottenUntil + CLOCK_MARGIN_MS);
    const { decision } = outcomes[i];
    return !decision.ok && decision.refusal.code === 'NOT_FROZEN';
  });
}

/** Whether the batch refuses a command and writes nothing: no append then checks the wallet it was decided on. */
const refusesWritingNothing = ({ events, outcomes }: BatchDecision<unknown>) => events.length === 0 && outcomes.some((o) => !o.decision.ok);

/** Each command's outcome, with its companion's result when it had one appended. */
function reply(batch: readonly Pending[], { outcomes, companions }: BatchDecision<Companion>, companionResults: readonly AppendResult[]): void {
  const replies: WalletOutcome[] = [...outcomes];
  companions.forEach(({ index }, i) => (replies[index] = { ...outcomes[index], companion: companionResults[i] }));
  batch.forEach((pending, i) => pending.resolve(replies[i]));
}
