import { Module } from '@nestjs/common';
import { MerchantsModule } from '../merchants/merchants.module';
import { StaffAuthenticator } from './auth/staff-authenticator';
import { StaffAuthGuard } from './auth/staff-auth.guard';
import { CatalogueController } from './catalogue/catalogue.controller';
import { CatalogueRepository } from './catalogue/catalogue.repository';
import { JsonBodyInterceptor } from './http/json-body.interceptor';
import { DepositsService } from './merchants/deposits.service';
import { MerchantsController } from './merchants/merchants.controller';
import { MerchantsRepository } from './merchants/merchants.repository';
import { StaffController } from './staff/staff.controller';
import { StaffRepository } from './staff/staff.repository';

/** The back office: /admin/v1/*, staff bearer tokens with roles; see docs/back-office-api.md. */
@Module({
  imports: [MerchantsModule],
  controllers: [StaffController, MerchantsController, CatalogueController],
  providers: [StaffAuthenticator, StaffAuthGuard, JsonBodyInterceptor, StaffRepository, MerchantsRepository, DepositsService, CatalogueRepository],
})
export class BackOfficeModule {}
