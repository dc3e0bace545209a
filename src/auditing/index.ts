/**
 * The auditing capability's public face: what the back office and the CLI
 * use of it. Everything else in src/auditing is its own business.
 */
export { AuditingModule } from './auditing.module';
export { ReadModelVerification, WalletHistory } from './auditor-services';
export type { ChainStatus } from './chain-check';
export { OutputClosedError, writableSink, writeStatement } from './statement-writer';
export type { StatementFormat } from './statement-writer';
export { verifyReadModels, WalletNotFoundError } from './verification/read-model-verifier';
export type { Cell, Difference, Row, VerificationReport, VerificationScope } from './verification/read-model-verifier';
export { PostgresWalletSnapshots } from './wallet-snapshots.reader';
export { balanceAsOf, openStatement, STATEMENT_PAGE_MAX, STATEMENT_PAGE_SIZE } from './wallet-statement';
export type { BalanceAsOf, Statement, StatementLine, StatementStream, StatementWindow } from './wallet-statement';
