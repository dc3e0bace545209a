import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { WalletSnapshot, walletSnapshot } from '../../ledger/commands/wallet-snapshot';
import { CLOCK } from '../../ledger/ledger.tokens';
import { WalletWriter } from '../../ledger/wallet/wallet-writer';
import { Clock } from '../../shared/clock';
import { OpenWallet } from './open-wallet.command';

@CommandHandler(OpenWallet)
export class OpenWalletHandler implements ICommandHandler<OpenWallet> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, currency }: OpenWallet): Promise<WalletSnapshot> {
    const at = this.clock.now();
    return walletSnapshot(merchantId, await this.wallets.execute(merchantId, { type: 'OpenWallet', merchantId, currency, at }));
  }
}
