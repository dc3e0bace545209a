import { Decision } from '../../shared/decider';
import { Minor } from '../../shared/money';
import { amountsOf, forkWallet, WalletCommand, walletDecider, WalletEvent, WalletRefusalCode, WalletState } from './wallet.decider';

/** A command of a batch, and what rides along with it (the writer's companion append). */
export interface BatchCommand<Companion> {
  command: WalletCommand;
  companion?: Companion;
}

/** A command's decision, and the wallet's amounts once it is decided. */
export interface DecidedCommand {
  decision: Decision<WalletEvent, WalletRefusalCode>;
  balance: Minor;
  frozen: Minor;
}

export interface BatchDecision<Companion> {
  /** One per command, in the batch's order. */
  outcomes: DecidedCommand[];
  /** The events of every command decided with some, in order: one append. */
  events: WalletEvent[];
  /** The companions of the commands decided with events, and the command each belongs to: appended with the events. */
  companions: { index: number; companion: Companion }[];
  /** The wallet after the events, forked off the wallet decided on (settleWallet it once the events are written). */
  after: WalletState;
}

/**
 * A wallet's commands decided one after the other, each on the wallet as
 * the ones before it left it, without changing the wallet decided on: a
 * batch whose append loses is dropped, and the same wallet decides the
 * commands again. A command refused, or accepted with no event (a deposit
 * again), leaves its companion out: there is nothing for it to commit with.
 */
export function decideBatch<Companion>(wallet: WalletState, batch: readonly BatchCommand<Companion>[]): BatchDecision<Companion> {
  let state = forkWallet(wallet);
  const outcomes: DecidedCommand[] = [];
  const events: WalletEvent[] = [];
  const companions: BatchDecision<Companion>['companions'] = [];
  for (const [index, { command, companion }] of batch.entries()) {
    const decision = walletDecider.decide(command, state);
    if (decision.ok) {
      for (const event of decision.events) state = walletDecider.evolve(state, event);
      events.push(...decision.events);
      if (companion !== undefined && decision.events.length > 0) companions.push({ index, companion });
    }
    const { balance, frozen } = amountsOf(state);
    outcomes.push({ decision, balance, frozen });
  }
  return { outcomes, events, companions, after: state };
}
