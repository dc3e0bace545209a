import { Command } from '@nestjs/cqrs';
import { Minor } from '../../../shared/money';
import { WalletSnapshot } from '../wallet-snapshot';

/** Money paid in by a merchant, credited to its wallet. Idempotent on its reference: the same deposit again changes nothing. */
export class DepositFunds extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly reference: string,
    readonly amount: Minor,
    readonly depositedBy: string,
    /** The second person who approved it, when the four-eyes rule asked for one. */
    readonly approvedBy?: string,
  ) {
    super();
  }
}
