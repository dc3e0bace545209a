import { Command } from '@nestjs/cqrs';
import { WalletSnapshot } from '../wallet-snapshot';

/** A new merchant's wallet, opened before the merchant is stored (see MerchantsService). */
export class OpenWallet extends Command<WalletSnapshot> {
  constructor(
    readonly merchantId: string,
    readonly currency: string,
  ) {
    super();
  }
}
