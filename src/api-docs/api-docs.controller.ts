import { Controller, Get, Header } from '@nestjs/common';
import { ApiDocuments } from './api-documents';
import { docsPage } from './docs-page';

/** The OpenAPI documents, as JSON and as a page; built at start-up, they never change while the service runs. */
@Controller('docs')
export class ApiDocsController {
  private page?: string;

  constructor(private readonly documents: ApiDocuments) {}

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
  index(): string {
    this.page ??= docsPage([
      { file: 'merchant-api.json', document: this.documents.merchantApi },
      { file: 'back-office.json', document: this.documents.backOffice },
    ]);
    return this.page;
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
