import { Get, Inject, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { balanceAsOf, statementCsv, walletStatement } from '../../auditing/wallet-statement';
import { EVENT_STORE, EventStore, parsePosition } from '../../infrastructure/event-store/event-store.port';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { parseInstant } from '../../shared/clock';
import { Roles } from '../auth/roles.decorator';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';

const invalid = (field: string, message: string) => new ApiError(422, 'VALIDATION_FAILED', message, field);

/**
 * A `+` pasted unencoded into a query string arrives as a space
 * (`?at=2026-11-22T10:00:00+00:00`). A space before the offset can mean
 * nothing else, so it is read as the `+` it was.
 */
function instant(raw: string | undefined, field: string): Date | undefined {
  if (raw === undefined) return undefined;
  const date = parseInstant(raw.replace(/ (\d\d:\d\d)$/, '+$1'));
  if (!date) throw invalid(field, `${field} must be an ISO 8601 time with an offset, e.g. 2026-11-22T10:00:00Z or 2026-11-22T10:00:00+00:00`);
  return date;
}

function integer(raw: string | undefined, field: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d{1,12}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw invalid(field, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

/**
 * A wallet's history for auditors, replayed from the event store (never from
 * the read models): the statement with its hash chain, and the balance as it
 * stood at any instant or global position.
 */
@BackOfficeController('wallets')
@Roles('auditor')
export class WalletHistoryController {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  @Get(':merchant_id/statement')
  async statement(
    @Param(PathIdsPipe) { merchant_id: merchantId }: PathIds,
    @Res({ passthrough: true }) response: Response,
    @Query('from') from?: string,
    @Query('to') to?: string,
    @Query('after_revision') afterRevision?: string,
    @Query('limit') limit?: string,
    @Query('format') format?: string,
  ) {
    if (format !== undefined && format !== 'json' && format !== 'csv') throw invalid('format', 'format must be json or csv');
    const statement = await walletStatement(this.store, merchantId, {
      from: instant(from, 'from'),
      to: instant(to, 'to'),
      afterRevision: integer(afterRevision, 'after_revision', 0, Number.MAX_SAFE_INTEGER),
      limit: integer(limit, 'limit', 1, 100_000) ?? 10_000,
    });
    if (!statement) throw new ApiError(404, 'WALLET_NOT_FOUND', `No wallet for merchant ${merchantId}`);
    if (format === 'csv') {
      response.setHeader('Content-Type', 'text/csv; charset=utf-8');
      response.setHeader('Content-Disposition', `attachment; filename="statement-${merchantId}.csv"`);
      if (statement.next_after_revision !== null) response.setHeader('X-Next-After-Revision', String(statement.next_after_revision));
      return statementCsv(statement);
    }
    return successEnvelope('OK', statement);
  }

  @Get(':merchant_id/balance')
  async balance(@Param(PathIdsPipe) { merchant_id: merchantId }: PathIds, @Query('at') at?: string, @Query('position') position?: string) {
    if (at !== undefined && position !== undefined) throw invalid('at', 'give at (ISO 8601) or position (commit/prepare), not both');
    let parsed;
    if (position !== undefined) {
      try {
        parsed = parsePosition(position);
      } catch {
        throw invalid('position', 'position must be a global position like 1234/56');
      }
    }
    // Neither: the balance now, from every event recorded so far.
    const result = await balanceAsOf(this.store, merchantId, { at: instant(at, 'at'), position: parsed });
    if (!result) throw new ApiError(404, 'WALLET_NOT_FOUND', `No wallet for merchant ${merchantId}`);
    return successEnvelope('OK', result);
  }
}
