import { Controller, Get, Param, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../infrastructure/http/api-error';
import { ApiDocuments } from './api-documents';
import { docsAsset, DOCS_PAGE } from './docs-assets';

/**
 * The OpenAPI documents as JSON, and the interactive reference that shows
 * them; built at start-up, they never change while the service runs. The
 * page's Content-Security-Policy is its entry in the HTTP edge's table
 * (infrastructure/http/surface-policies.ts); the edge sets every other header.
 */
@Controller('docs')
export class ApiDocsController {
  constructor(private readonly documents: ApiDocuments) {}

  @Get()
  page(@Res() response: Response) {
    response.type('html').send(DOCS_PAGE);
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Res() response: Response) {
    const asset = await docsAsset(file);
    if (!asset) throw new ApiError(404, 'NOT_FOUND', 'No such route');
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
