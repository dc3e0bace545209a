import { Command } from '@nestjs/cqrs';
import { WalletAdjustment } from '../../wallet/wallet.decider';
import { WalletSnapshot } from '../wallet-snapshot';

/**
 * Staff correct a wallet's balance outside any order's hold: a credit or a
 * debit, with a reason code and a note, usually for a final order that the
 * upstream's own report contradicts (`orderNo`; at most once per order and
 * reason). Idempotent on its reference. A debit never takes the available
 * balance below zero.
 */
export class AdjustWallet extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly adjustment: WalletAdjustment,
    readonly adjustedBy: string,
    /** The second person who approved it, when the four-eyes rule asked for one. */
    readonly approvedBy?: string,
  ) {
    super();
  }
}
