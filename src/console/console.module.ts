import { Module } from '@nestjs/common';
import { BackOfficeModule } from '../back-office/back-office.module';
import { ConsoleController, FaviconController } from './console.controller';

/** The staff console at /console; see docs/console.md. */
@Module({ imports: [BackOfficeModule], controllers: [ConsoleController, FaviconController] })
export class ConsoleModule {}
