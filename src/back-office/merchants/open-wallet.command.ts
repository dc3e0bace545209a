import { Command } from '@nestjs/cqrs';
import { WalletSnapshot } from '../../ledger/commands/wallet-snapshot';

/** A new merchant's wallet, opened before the merchant is stored (see MerchantsController.create). */
export class OpenWallet extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly currency: string,
  ) {
    super();
  }
}
