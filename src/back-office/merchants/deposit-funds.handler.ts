import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { WalletSnapshot, walletSnapshot } from '../../ledger/commands/wallet-snapshot';
import { CLOCK } from '../../ledger/ledger.tokens';
import { WalletWriter } from '../../ledger/wallet/wallet-writer';
import { Clock } from '../../shared/clock';
import { DepositFunds } from './deposit-funds.command';

@CommandHandler(DepositFunds)
export class DepositFundsHandler implements ICommandHandler<DepositFunds> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, reference, amount, depositedBy }: DepositFunds): Promise<WalletSnapshot> {
    const at = this.clock.now();
    return walletSnapshot(merchantId, await this.wallets.execute(merchantId, { type: 'DepositFunds', reference, amount, by: depositedBy, at }));
  }
}
