import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { CLOCK } from '../../ledger.tokens';
import { WalletWriter } from '../../wallet/wallet-writer';
import { WalletSnapshot, walletSnapshot } from '../wallet-snapshot';
import { OpenWallet } from './open-wallet.command';

@CommandHandler(OpenWallet)
export class OpenWalletHandler implements ICommandHandler<OpenWallet, WalletSnapshot> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, currency }: OpenWallet): Promise<WalletSnapshot> {
    const open = { type: 'OpenWallet', merchantId, currency, at: this.clock.now() } as const;
    return walletSnapshot(merchantId, await this.wallets.execute(merchantId, open));
  }
}
