import { Command } from '@nestjs/cqrs';
import { WalletSnapshot } from '../../ledger/commands/wallet-snapshot';
import { Minor } from '../../shared/money';

/** Idempotent on its reference: the same deposit again changes nothing. */
export class DepositFunds extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly reference: string,
    readonly amount: Minor,
    readonly depositedBy: string,
  ) {
    super();
  }
}
