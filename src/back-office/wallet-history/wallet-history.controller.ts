import { Get, Logger, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  OutputClosedError,
  STATEMENT_PAGE_MAX,
  STATEMENT_PAGE_SIZE,
  StatementFormat,
  StatementStream,
  StatementWindow,
  WalletHistory,
  writableSink,
  writeStatement,
} from '../../auditing';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { logFailure } from '../../infrastructure/logging/log-failure';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { choice, instant, integer, position } from '../http/query-readers';
import { invalidParameter, QueryString, QueryValues } from '../http/query-string';
import { requestFields } from '../../infrastructure/logging/request-context';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const FORMATS: readonly StatementFormat[] = ['json', 'csv'];
const EXPORT_QUERY = { from: instant, to: instant, format: choice(FORMATS) };
const STATEMENT_QUERY = { ...EXPORT_QUERY, after_revision: integer(0, Number.MAX_SAFE_INTEGER), limit: integer(1, STATEMENT_PAGE_MAX) };
const BALANCE_QUERY = { at: instant, position, replay: choice(['snapshots', 'full'] as const) };

/**
 * A wallet's history for auditors, replayed from the event store (never from
 * the statement read model): the statement with its hash chain, a page at a
 * time or as one streamed export, and the balance as it stood at any instant
 * or global position.
 */
@BackOfficeController()
@Roles('auditor')
export class WalletHistoryController {
  private readonly logger = new Logger('WalletHistory');

  constructor(private readonly history: WalletHistory) {}

  /** One page: `limit` lines (default STATEMENT_PAGE_SIZE) after the cursor `after_revision`. */
  @Get(BACK_OFFICE_ROUTES.statement)
  async statement(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Res() response: Response,
    @QueryString(STATEMENT_QUERY) q: QueryValues<typeof STATEMENT_QUERY>,
  ) {
    const chosen = q.format ?? 'json';
    const window: StatementWindow = { from: q.from, to: q.to, afterRevision: q.after_revision };
    const statement = await this.history.statement(merchantId, window, q.limit ?? STATEMENT_PAGE_SIZE);
    await this.send(response, chosen, statement, merchantId, { envelope: chosen === 'json' });
  }

  /** The whole statement in the window, streamed as it is replayed: memory stays flat whatever the wallet's length. */
  @Get(BACK_OFFICE_ROUTES.statementExport)
  async export(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Res() response: Response,
    @QueryString(EXPORT_QUERY) q: QueryValues<typeof EXPORT_QUERY>,
  ) {
    const chosen = q.format ?? 'json';
    const statement = await this.history.statement(merchantId, { from: q.from, to: q.to });
    await this.send(response, chosen, statement, merchantId, { envelope: false });
  }

  private async send(
    response: Response,
    format: StatementFormat,
    statement: StatementStream | undefined,
    merchantId: string,
    { envelope }: { envelope: boolean },
  ) {
    if (!statement) throw new ApiError(404, 'WALLET_NOT_FOUND', `No wallet for merchant ${merchantId}`);
    response.status(200);
    response.setHeader('Content-Type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
    if (!envelope) response.setHeader('Content-Disposition', `attachment; filename="statement-${merchantId}.${format}"`);
    if (statement.next_after_revision !== null) response.setHeader('X-Next-After-Revision', String(statement.next_after_revision));
    try {
      await writeStatement(writableSink(response), format, statement, { envelope });
      response.end();
    } catch (error) {
      // The status line is out: the one honest signal left is to cut the response short.
      if (!(error instanceof OutputClosedError))
        logFailure(this.logger, `statement of ${merchantId} failed while streaming`, error, requestFields(response.req));
      response.destroy();
    }
  }

  /** The wallet's hash chain, checked link by link in the event store. */
  @Get(BACK_OFFICE_ROUTES.chain)
  async chain(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds) {
    const status = await this.history.chain(merchantId);
    if (!status) throw new ApiError(404, 'WALLET_NOT_FOUND', `No wallet for merchant ${merchantId}`);
    return successEnvelope('OK', status);
  }

  /**
   * From the nearest snapshot and the events after it; `replay=full` folds every event instead.
   * Clerks see it too: what a resolution will move is part of deciding it.
   */
  @Get(BACK_OFFICE_ROUTES.balanceAsOf)
  @Roles('auditor', 'reconciler')
  async balance(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @QueryString(BALANCE_QUERY) { at, position, replay }: QueryValues<typeof BALANCE_QUERY>,
  ) {
    if (at !== undefined && position !== undefined) throw invalidParameter('at', 'give at (ISO 8601) or position (commit/prepare), not both');
    // Neither at nor position: the balance now, from every event recorded so far.
    const result = await this.history.balanceAsOf(merchantId, { at, position }, { fullReplay: replay === 'full' });
    if (!result) throw new ApiError(404, 'WALLET_NOT_FOUND', `No wallet for merchant ${merchantId}`);
    return successEnvelope('OK', result);
  }
}
