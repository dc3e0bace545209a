import { CommandRefusedError } from '../../shared/command-refused';
import { Minor } from '../../shared/money';
import { WalletOutcome } from '../wallet/wallet-writer';

export interface WalletSnapshot {
  merchantId: string;
  balance: Minor;
  frozen: Minor;
  available: Minor;
}

/** The wallet after a command, for the command's caller; a refusal is thrown for the API to map. */
export function walletSnapshot(merchantId: string, outcome: WalletOutcome): WalletSnapshot {
  if (!outcome.decision.ok) throw new CommandRefusedError(outcome.decision.refusal.code, outcome.decision.refusal.message);
  return { merchantId, balance: outcome.balance, frozen: outcome.frozen, available: outcome.balance - outcome.frozen };
}
