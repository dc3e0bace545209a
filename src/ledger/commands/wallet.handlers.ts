import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Clock } from '../../shared/clock';
import { CommandRefusedError } from '../../shared/command-refused';
import { WalletOutcome, WalletWriter } from '../wallet/wallet-writer';
import { CLOCK } from '../ledger.tokens';
import { DepositFunds, OpenWallet, WalletSnapshot } from './ledger.commands';

function snapshot(merchantId: string, outcome: WalletOutcome): WalletSnapshot {
  if (!outcome.decision.ok) throw new CommandRefusedError(outcome.decision.refusal.code, outcome.decision.refusal.message);
  return { merchantId, balance: outcome.balance, frozen: outcome.frozen, available: outcome.balance - outcome.frozen };
}

@CommandHandler(OpenWallet)
export class OpenWalletHandler implements ICommandHandler<OpenWallet> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, currency }: OpenWallet): Promise<WalletSnapshot> {
    const at = this.clock.now();
    return snapshot(merchantId, await this.wallets.execute(merchantId, { type: 'OpenWallet', merchantId, currency, at }));
  }
}

@CommandHandler(DepositFunds)
export class DepositFundsHandler implements ICommandHandler<DepositFunds> {
  constructor(
    private readonly wallets: WalletWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async execute({ merchantId, reference, amount, depositedBy }: DepositFunds): Promise<WalletSnapshot> {
    const at = this.clock.now();
    const outcome = await this.wallets.execute(merchantId, { type: 'DepositFunds', reference, amount, by: depositedBy, at });
    return snapshot(merchantId, outcome);
  }
}
