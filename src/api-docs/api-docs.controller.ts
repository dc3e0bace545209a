import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../infrastructure/http/api-error';
import { ApiDocuments } from './api-documents';
import { docsAsset, DOCS_PAGE } from './docs-assets';

/**
 * The console's policy but for one thing Swagger UI needs: `img-src data:`,
 * for the icons its stylesheet draws as data: URLs (the arrows of the
 * selects, the copy button). No script runs but the files served from
 * /docs/assets, no inline style or script, and nothing is fetched from
 * anywhere but this service.
 */
export const DOCS_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function pageHeaders(response: Response) {
  response.setHeader('Content-Security-Policy', DOCS_CONTENT_SECURITY_POLICY);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'no-referrer');
  response.setHeader('X-Frame-Options', 'DENY');
  // The files change only with the service: asked again each time, answered 304 while their ETag holds.
  response.setHeader('Cache-Control', 'no-cache');
}

/** The OpenAPI documents as JSON, and the interactive reference that shows them; built at start-up, they never change while the service runs. */
@Controller('docs')
export class ApiDocsController {
  constructor(private readonly documents: ApiDocuments) {}

  @Get()
  page(@Res() response: Response) {
    pageHeaders(response);
    response.type('html').send(DOCS_PAGE);
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Res() response: Response) {
    const asset = await docsAsset(file);
    if (!asset) throw new ApiError(404, 'NOT_FOUND', 'No such route');
    pageHeaders(response);
    response.type(asset.type).send(asset.body);
  }

  @Get('merchant-api.json')
  merchantApiJson() {
    return this.documents.merchantApi;
  }

  @Get('back-office.json')
  backOfficeJson() {
    return this.documents.backOffice;
  }
}
