import { Module } from '@nestjs/common';

/** The back office: /admin/v1/*, bearer tokens with roles. */
@Module({})
export class BackOfficeModule {}
