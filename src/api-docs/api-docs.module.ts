import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ApiDocsController } from './api-docs.controller';
import { ApiDocuments } from './api-documents';

/** GET /docs: the OpenAPI documents of the merchant API and the back office. */
@Module({ imports: [DiscoveryModule], controllers: [ApiDocsController], providers: [ApiDocuments] })
export class ApiDocsModule {}
