import { Body, Get, Headers, HttpCode, Inject, Logger, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { approvalOr } from '../../approvals/approval-reply';
import { MAX_REPORT_BYTES, UPSTREAM, UpstreamProvider, UpstreamReportError } from '../../../fulfilment';
import { ApiError, FailureEnvelope, successEnvelope } from '../../../infrastructure/http/api-error';
import { logFailure } from '../../../infrastructure/logging/log-failure';
import { requestFields } from '../../../infrastructure/logging/request-context';
import { CurrentStaff } from '../../auth/current-staff.decorator';
import { Roles } from '../../auth/roles.decorator';
import type { StaffMember } from '../../auth/staff-member';
import { BodyPipe } from '../../http/back-office-body.pipe';
import { BackOfficeController } from '../../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../../http/identifier';
import { JsonBodyLimit, RawBody } from '../../http/json-body.interceptor';
import { DEFAULT_PAGE_SIZE, ListPage, listQuery, page } from '../../http/listing';
import { choice, instant } from '../../http/query-readers';
import { invalidParameter, QueryReader, QueryString, QueryValues } from '../../http/query-string';
import { BACK_OFFICE_ROUTES } from '../../routes.public';
import { MAX_BULK_BODY_BYTES } from '../../../shared/limits';
import { BulkApplyDto } from '../bulk-apply/bulk-apply.dto';
import { BulkApplyRequests } from '../bulk-apply/bulk-apply-requests';
import { ITEM_PAGE_QUERY, ITEM_PAGE_SIZE } from '../item-page';
import { EXPORT_HEADER, exportRow } from './report-export';
import { REPORT_CATEGORIES, ReportWindow } from './report-matching';
import { FetchReportDto } from './reports.dto';
import { ReceivedReport, ReportsService, SHOWN_ERRORS } from './reports.service';
import { ReportLineError, UpstreamReportSummaryView } from './reports.view';
import { fileFromMultipart, MultipartError, multipartBoundary, UploadedFile } from './multipart';

/** The 422 a report with errors gets: the report is kept (`report_id`), its first errors listed. */
export interface ReportRejectedEnvelope extends FailureEnvelope {
  code: 'REPORT_INVALID';
  report_id: string;
  error_count: number;
  errors: ReportLineError[];
}

/** What a raw upload may be labelled: CSV, or text that is CSV, or bytes. */
const RAW_TYPES = ['text/csv', 'text/plain', 'application/csv', 'application/octet-stream'];

/** A name for a raw upload: 1-255 characters without slashes (it may end up as a file name). */
const uploadFileName: QueryReader<string> = (raw, name) => {
  if (!/^[^/\\]{1,255}$/u.test(raw)) throw invalidParameter(name, `${name} must be 1-255 characters without slashes`);
  return raw;
};

const UPLOAD_QUERY = { from: instant, to: instant, file_name: uploadFileName };
const REPORTS_QUERY = listQuery({}, 2);
const REPORT_QUERY = { category: choice(REPORT_CATEGORIES), ...ITEM_PAGE_QUERY };
const EXPORT_QUERY = { category: choice(REPORT_CATEGORIES) };

/**
 * The upstream's own transaction reports: fetched from it, or uploaded by
 * hand for providers that send files; each kept as received and matched
 * against our orders, listed by category, exported for the finance team,
 * and applied in one call.
 */
@BackOfficeController()
@Roles('reconciler')
export class ReportsController {
  private readonly logger = new Logger('Reports');

  constructor(
    private readonly reports: ReportsService,
    private readonly applies: BulkApplyRequests,
    @Inject(UPSTREAM) private readonly upstream: UpstreamProvider,
  ) {}

  /** A report as a file: the raw CSV (Content-Type text/csv) or one file of multipart/form-data; at most 10 MiB. */
  @Post(BACK_OFFICE_ROUTES.reports)
  @RawBody(MAX_REPORT_BYTES)
  async upload(
    @Body() body: Buffer,
    @Headers('content-type') contentType: string | undefined,
    @QueryString(UPLOAD_QUERY) q: QueryValues<typeof UPLOAD_QUERY>,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const window = uploadWindow(q);
    const file = uploadedFile(body, contentType);
    const received = await this.reports.receive(file.bytes, {
      source: 'upload',
      fileName: file.fileName ?? q.file_name ?? null,
      receivedBy: by.staffId,
      window,
    });
    return this.answer(received, response);
  }

  /** The service asks the upstream for its report of [from, to). */
  @Post(BACK_OFFICE_ROUTES.reportsFetch)
  async fetch(@Body(BodyPipe) body: FetchReportDto, @CurrentStaff() by: StaffMember, @Res({ passthrough: true }) response: Response) {
    const window = windowOf(instant(body.from, 'from'), instant(body.to, 'to'), 'from', 'to');
    let bytes: Buffer;
    try {
      bytes = await this.upstream.transactionReport(window.from, window.to);
    } catch (error) {
      if (error instanceof UpstreamReportError) throw new ApiError(502, 'UPSTREAM_REPORT_FAILED', error.message);
      throw error;
    }
    const fileName = `transactions-${body.from}-${body.to}.csv`.replace(/[^A-Za-z0-9._-]/g, '_');
    return this.answer(await this.reports.receive(bytes, { source: 'upstream', fileName, receivedBy: by.staffId, window }), response);
  }

  /** Reports, newest first. */
  @Get(BACK_OFFICE_ROUTES.reports)
  @Roles('reconciler', 'auditor')
  async list(@QueryString(REPORTS_QUERY) q: QueryValues<typeof REPORTS_QUERY>) {
    const limit = q.limit ?? DEFAULT_PAGE_SIZE;
    const { rows, views } = await this.reports.list(q.cursor, limit + 1);
    const { shown, next_cursor } = page(rows, limit, (r) => [r.sort_at, r.report_id]);
    return successEnvelope('OK', { reports: views.slice(0, shown.length), next_cursor } satisfies ListPage<'reports', UpstreamReportSummaryView>);
  }

  /** A report: its errors, its counts per category and a page of its items. */
  @Get(BACK_OFFICE_ROUTES.report)
  @Roles('reconciler', 'auditor')
  async report(@Param(PathIdsPipe) { report_id: reportId }: PathIds, @QueryString(REPORT_QUERY) q: QueryValues<typeof REPORT_QUERY>) {
    const view = await this.reports.view(reportId, { category: q.category, limit: q.limit ?? ITEM_PAGE_SIZE, offset: q.offset ?? 0 });
    if (!view) throw new ApiError(404, 'REPORT_NOT_FOUND', `No report ${reportId}`);
    return successEnvelope('OK', view);
  }

  /**
   * The report exactly as it was received, byte for byte, for an auditor to
   * compare with the provider's file (the SHA-256 is in X-Content-SHA256 and
   * in the report). Served as an opaque download: the provider's cells are
   * not neutralised here, which is why this is not the export.
   */
  @Get(BACK_OFFICE_ROUTES.reportOriginal)
  @Roles('reconciler', 'auditor')
  async original(@Param(PathIdsPipe) { report_id: reportId }: PathIds, @Res() response: Response) {
    const original = await this.reports.original(reportId);
    if (!original) throw new ApiError(404, 'REPORT_NOT_FOUND', `No report ${reportId}`);
    response.status(200);
    response.setHeader('Content-Type', 'application/octet-stream');
    response.setHeader('Content-Disposition', `attachment; filename="report-${reportId}-original.csv"`);
    response.setHeader('X-Content-SHA256', original.sha256);
    response.end(original.content);
  }

  /** The items (of one category, or all) as CSV a spreadsheet opens safely, streamed. */
  @Get(BACK_OFFICE_ROUTES.reportExport)
  @Roles('reconciler', 'auditor')
  async export(
    @Param(PathIdsPipe) { report_id: reportId }: PathIds,
    @QueryString(EXPORT_QUERY) { category }: QueryValues<typeof EXPORT_QUERY>,
    @Res() response: Response,
  ) {
    if (!(await this.reports.header(reportId))) throw new ApiError(404, 'REPORT_NOT_FOUND', `No report ${reportId}`);
    response.status(200);
    response.setHeader('Content-Type', 'text/csv; charset=utf-8');
    response.setHeader('Content-Disposition', `attachment; filename="report-${reportId}${category ? `-${category}` : ''}.csv"`);
    try {
      await write(response, EXPORT_HEADER);
      for await (const items of this.reports.itemPages(reportId, category)) await write(response, items.map(exportRow).join(''));
      response.end();
    } catch (error) {
      // The status line is out: the one honest signal left is to cut the response short.
      if (!(error instanceof ClientGone)) logFailure(this.logger, `export of report ${reportId} failed while streaming`, error, requestFields(response.req));
      response.destroy();
    }
  }

  /** The report's resolvable orders, or the orders chosen, each resolved as a clerk would by hand, the line its evidence. */
  @Post(BACK_OFFICE_ROUTES.reportApply)
  @JsonBodyLimit(MAX_BULK_BODY_BYTES)
  @HttpCode(200)
  async apply(
    @Param(PathIdsPipe) { report_id: reportId }: PathIds,
    @Body(BodyPipe) body: BulkApplyDto,
    @CurrentStaff() by: StaffMember,
    @Res({ passthrough: true }) response: Response,
  ) {
    const answer = await this.applies.apply({ source: 'report', reportId, orders: body.orders }, body.note, by.staffId);
    return approvalOr(response, answer.approval, () => answer.applied);
  }

  /** 201 for a new report, 200 DUPLICATE for the same bytes again; 422 with the errors for a report that has any (kept all the same). */
  private async answer(received: ReceivedReport, response: Response) {
    const view = await this.reports.view(received.reportId, { limit: 100, offset: 0 });
    if (!view) throw new Error(`report ${received.reportId} vanished after it was recorded`);
    if (!received.valid) {
      const [first] = view.errors;
      const where = first ? ` (the first: line ${first.line}${first.column ? `, ${first.column}` : ''}: ${first.message})` : '';
      throw new ApiError(
        422,
        'REPORT_INVALID',
        `The report has ${view.error_count} error${view.error_count === 1 ? '' : 's'}${where}; it is kept as ${view.report_id} but can never be applied`,
        undefined,
        {},
        { report_id: view.report_id, error_count: view.error_count, errors: view.errors.slice(0, SHOWN_ERRORS) },
      );
    }
    response.status(received.created ? 201 : 200);
    return successEnvelope(received.created ? 'OK' : 'DUPLICATE', view);
  }
}

/** The upload's window: from and to, both or neither. */
function uploadWindow({ from, to }: QueryValues<typeof UPLOAD_QUERY>): ReportWindow | undefined {
  if (from === undefined && to === undefined) return undefined;
  if (from === undefined || to === undefined)
    throw new ApiError(422, 'VALIDATION_FAILED', 'Give both from and to, or neither', from === undefined ? 'from' : 'to');
  return windowOf(from, to, 'from', 'to');
}

function windowOf(from: Date, to: Date, fromField: string, toField: string): ReportWindow {
  if (from >= to) throw new ApiError(422, 'VALIDATION_FAILED', `${toField} must be later than ${fromField}`, toField);
  return { from, to };
}

/** The file: the whole body, or the one file of a multipart body. */
function uploadedFile(body: Buffer, contentType: string | undefined): UploadedFile {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  try {
    const boundary = multipartBoundary(contentType ?? '');
    if (boundary !== undefined) return fileFromMultipart(body, boundary);
  } catch (error) {
    if (error instanceof MultipartError) throw new ApiError(400, 'INVALID_MULTIPART', `The multipart body is not one file: ${error.message}`);
    throw error;
  }
  if (type !== '' && !RAW_TYPES.includes(type)) {
    throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Send the report as text/csv, or as one file of multipart/form-data, not ${type}`, 'Content-Type');
  }
  return { fileName: null, bytes: body };
}

/** The client stopped reading and closed the connection: nobody to tell, nothing went wrong here. */
class ClientGone extends Error {}

/** Writes a chunk, waiting while the client's buffer is full. */
function write(response: Response, chunk: string): Promise<void> {
  if (response.destroyed) return Promise.reject(new ClientGone());
  if (response.write(chunk)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const drained = () => {
      response.off('close', closed);
      resolve();
    };
    const closed = () => {
      response.off('drain', drained);
      reject(new ClientGone());
    };
    response.once('drain', drained).once('close', closed);
  });
}
