import { Body, HttpCode, Logger, Post, Req } from '@nestjs/common';
import { IsIn } from 'class-validator';
import { Cell, Difference, ReadModelVerification, Row, VerificationReport, VerificationScope, WalletNotFoundError } from '../../auditing';
import { formatAmount } from '../../shared/money';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { OptionalBodyPipe } from '../http/back-office-body.pipe';
import { Doc, IsIdentifier, Optional } from '../../infrastructure/http/field-rules';
import { requestFields } from '../../infrastructure/logging/request-context';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const SCOPES: readonly VerificationScope[] = ['merchant', 'wallet'];

export class VerifyDto {
  /** One wallet and its orders; without it, the whole log. */
  @Doc({ examples: ['mch_0123456789abcdef'] })
  @Optional()
  @IsIdentifier()
  merchant_id?: string;

  /** With merchant_id: "wallet" checks the wallet alone, "merchant" (the default) its orders too. */
  @Optional()
  @IsIn(SCOPES, { message: `scope must be one of ${SCOPES.join(', ')}` })
  scope?: VerificationScope;
}

/** A long check says how far it is in the service's log, at most this often. */
const PROGRESS_EVERY_MS = 10_000;

/**
 * Replays the log and compares it with the read models (read-only, so
 * auditors may run it). It runs inside the request: the whole log takes as
 * long as a replay does, and reports its progress in the service's log.
 */
@BackOfficeController()
@Roles('auditor')
export class VerificationController {
  private readonly logger = new Logger('Verification');

  constructor(private readonly verification: ReadModelVerification) {}

  @Post(BACK_OFFICE_ROUTES.verify)
  @HttpCode(200)
  async verify(@Body(OptionalBodyPipe) { merchant_id: merchantId, scope }: VerifyDto, @Req() request: object) {
    // An empty body means "everything", like {}.
    if (scope !== undefined && merchantId === undefined) throw new ApiError(422, 'VALIDATION_FAILED', 'scope needs a merchant_id', 'scope');
    const what = merchantId === undefined ? 'the whole log' : `${scope ?? 'merchant'} ${merchantId}`;
    let reported = Date.now();
    const onProgress = (events: number) => {
      if (Date.now() - reported < PROGRESS_EVERY_MS) return;
      reported = Date.now();
      this.logger.log({ message: `verifying ${what}: ${events} events checked so far`, ...requestFields(request) });
    };
    try {
      const report = await this.verification.verify({ merchantId, scope, onProgress });
      return successEnvelope('OK', { ...report, differences: report.differences.map(differenceView) } satisfies VerificationReport);
    } catch (error) {
      if (error instanceof WalletNotFoundError) throw new ApiError(404, 'WALLET_NOT_FOUND', error.message);
      throw error;
    }
  }
}

/** The read models' money columns: stored in minor units, shown as two-decimal strings like every amount in a reply. */
const MONEY_COLUMNS = new Set(['amount', 'balance', 'frozen', 'available', 'balance_after', 'frozen_after', 'available_after']);

const moneyCell = (column: string, value: Cell): Cell =>
  MONEY_COLUMNS.has(column) && typeof value === 'string' && /^-?\d{1,30}$/.test(value) ? formatAmount(BigInt(value)) : value;

const moneyRow = (row: Row): Row => Object.fromEntries(Object.entries(row).map(([column, value]) => [column, moneyCell(column, value)]));

function differenceView(difference: Difference): Difference {
  const view = (value: Cell | Row) =>
    value !== null && typeof value === 'object' ? moneyRow(value) : difference.column ? moneyCell(difference.column, value) : value;
  return { ...difference, expected: view(difference.expected), actual: view(difference.actual) };
}
