import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../../shared/clock';
import { CLOCK } from '../../ledger.tokens';
import { WalletWriter } from '../../wallet/wallet-writer';
import { WalletSnapshot, walletSnapshot } from '../wallet-snapshot';
import { DepositFunds } from './deposit-funds.command';

@CommandHandler(DepositFunds)
export class DepositFundsHandler implements ICommandHandler<DepositFunds, WalletSnapshot> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, reference, amount, depositedBy, approvedBy }: DepositFunds): Promise<WalletSnapshot> {
    const deposit = { type: 'DepositFunds', reference, amount, by: depositedBy, approvedBy, at: this.clock.now() } as const;
    return walletSnapshot(merchantId, await this.wallets.execute(merchantId, deposit));
  }
}
