import { Module } from '@nestjs/common';
import { ApiDocsController } from './api-docs.controller';

/** GET /docs: the OpenAPI documents of the merchant API and the back office. */
@Module({ controllers: [ApiDocsController] })
export class ApiDocsModule {}
