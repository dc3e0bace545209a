import { Module } from '@nestjs/common';
import { ReadModelVerification, WalletHistory } from './auditor-services';

/** What the back office's auditors ask of the log: wallet histories and the read models' verification. */
@Module({
  providers: [WalletHistory, ReadModelVerification],
  exports: [WalletHistory, ReadModelVerification],
})
export class AuditingModule {}
