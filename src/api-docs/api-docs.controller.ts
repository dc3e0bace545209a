import { Controller, Get, Header } from '@nestjs/common';
import { backOfficeDocument } from './back-office.openapi';
import { docsPage } from './docs-page';
import { merchantApiDocument } from './merchant-api.openapi';

/**
 * The OpenAPI documents, as JSON and as a page; built once, they never change
 * while the service runs. The page's Content-Security-Policy is its entry in
 * the HTTP edge's table (infrastructure/http/surface-policies.ts).
 */
@Controller('docs')
export class ApiDocsController {
  private readonly merchantApi = merchantApiDocument();
  private readonly backOffice = backOfficeDocument();
  private readonly page = docsPage([
    { file: 'merchant-api.json', document: this.merchantApi },
    { file: 'back-office.json', document: this.backOffice },
  ]);

  @Get()
  @Header('Content-Type', 'text/html; charset=utf-8')
  index(): string {
    return this.page;
  }

  @Get('merchant-api.json')
  merchantApiJson() {
    return this.merchantApi;
  }

  @Get('back-office.json')
  backOfficeJson() {
    return this.backOffice;
  }
}
