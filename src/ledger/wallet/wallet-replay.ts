import { EventToAppend, ReplayedEvent } from '../ports/event-store.port';
import { chainHash, GENESIS_HASH } from '../../shared/hash-chain';
import { Minor } from '../../shared/money';
import { decodeEvent } from '../event-codec';
import { WalletEvent, walletMovement } from './wallet.decider';

/**
 * The one replay of a wallet's events: the writer folds them into the
 * decider's state, the auditors into running amounts, the verification into
 * both; each event also extends the wallet's hash chain. Reading the events
 * is the caller's part.
 */

/** A wallet replayed up to the event at `revision` (-1n: before its first event): what `evolve` made of it, and the head of its hash chain. */
export interface WalletReplay<State> {
  state: State;
  revision: bigint;
  hash: string;
}

export type WalletEvolve<State> = (state: State, event: WalletEvent) => State;

/** What a wallet event carries of its place in the stream and the chain. */
export type LinkedEvent = Pick<ReplayedEvent, 'revision' | 'type' | 'data' | 'metadata'>;

export const openingReplay = <State>(state: State): WalletReplay<State> => ({ state, revision: -1n, hash: GENESIS_HASH });

/**
 * The hash an event adds to the chain after `prevHash`: the one it was
 * stored with, or, for an event stored without its link (written by hand,
 * say), the one it should have had.
 */
export function linkOf(prevHash: string, event: LinkedEvent): string {
  return typeof event.metadata.hash === 'string' ? event.metadata.hash : chainHash(prevHash, event.revision, event.type, event.data);
}

/** Why an event's stored link does not continue the chain after `prevHash`; undefined when it does. */
export function brokenLink(prevHash: string, event: LinkedEvent): string | undefined {
  if (event.metadata.prev_hash !== prevHash) return `prev_hash ${String(event.metadata.prev_hash)} is not the hash of the event before it (${prevHash})`;
  if (event.metadata.hash !== chainHash(prevHash, event.revision, event.type, event.data)) return 'hash does not match the event’s revision, type and data';
  return undefined;
}

/** The replay after one more event (`event` is the recorded one decoded, when the caller has it already). */
export function replayEvent<State>(
  replay: WalletReplay<State>,
  recorded: LinkedEvent,
  evolve: WalletEvolve<State>,
  event: WalletEvent = decodeEvent<WalletEvent>(recorded),
): WalletReplay<State> {
  return { state: evolve(replay.state, event), revision: recorded.revision, hash: linkOf(replay.hash, recorded) };
}

/** The replay after the events that follow it. */
export function replayEvents<State>(from: WalletReplay<State>, recorded: readonly LinkedEvent[], evolve: WalletEvolve<State>): WalletReplay<State> {
  let replay = from;
  for (const event of recorded) replay = replayEvent(replay, event, evolve);
  return replay;
}

/** A wallet's amounts: all a statement or a balance needs of its state. */
export interface WalletAmounts {
  balance: Minor;
  frozen: Minor;
}

export const NO_AMOUNTS: WalletAmounts = Object.freeze({ balance: 0n, frozen: 0n });

/** The evolve of a replay that keeps the amounts alone (the decider's also remembers holds and deposit references). */
export function addMovement(amounts: WalletAmounts, event: WalletEvent): WalletAmounts {
  const movement = walletMovement(event);
  return { balance: amounts.balance + movement.balance, frozen: amounts.frozen + movement.frozen };
}

/**
 * New events linked into the chain after `head`, the first at `firstRevision`:
 * each carries its `prev_hash` and `hash` in its metadata (tamper evidence
 * for auditors). Returns them and the chain's new head.
 */
export function chainEvents(head: string, firstRevision: bigint, events: readonly EventToAppend[]): { chained: EventToAppend[]; head: string } {
  let hash = head;
  const chained = events.map((event, i) => {
    const prev = hash;
    hash = chainHash(prev, firstRevision + BigInt(i), event.type, event.data);
    return { ...event, metadata: { prev_hash: prev, hash } };
  });
  return { chained, head: hash };
}
