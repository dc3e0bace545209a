import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { CLOCK } from '../../ledger.tokens';
import { WalletWriter } from '../../wallet/wallet-writer';
import { WalletSnapshot, walletSnapshot } from '../wallet-snapshot';
import { AdjustWallet } from './adjust-wallet.command';

@CommandHandler(AdjustWallet)
export class AdjustWalletHandler implements ICommandHandler<AdjustWallet, WalletSnapshot> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, adjustment, adjustedBy, approvedBy }: AdjustWallet): Promise<WalletSnapshot> {
    const adjust = { type: 'AdjustWallet', ...adjustment, by: adjustedBy, approvedBy, at: this.clock.now() } as const;
    return walletSnapshot(merchantId, await this.wallets.execute(merchantId, adjust));
  }
}
