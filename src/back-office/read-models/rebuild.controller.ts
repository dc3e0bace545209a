import { Body, Get, HttpCode, Param, Post } from '@nestjs/common';
import { IsIn } from 'class-validator';
import { allProjections } from '../../../projections/all-projections';
import { ApiError, successEnvelope } from '../../infrastructure/http/api-error';
import { CurrentStaff } from '../auth/current-staff.decorator';
import { Roles } from '../auth/roles.decorator';
import type { StaffMember } from '../auth/staff-member';
import { BackOfficeController } from '../http/back-office-controller.decorator';
import { PathIds, PathIdsPipe } from '../http/identifier';
import { OptionalBodyPipe } from '../http/back-office-body.pipe';
import { Optional } from '../../infrastructure/http/field-rules';
import { RebuildRunner } from './rebuild-runner';
import { RebuildRuns, RebuildStartedView } from './rebuild-runs';
import { BACK_OFFICE_ROUTES } from '../routes.public';

const NAMES = allProjections.map((p) => p.name);

export class RebuildDto {
  /** One projection; without it, all of them, one after the other. */
  @Optional()
  @IsIn(NAMES, { message: `projection must be one of ${NAMES.join(', ')}` })
  projection?: string;
}

/** Online rebuilds of the read models, run in the background of the instance asked (RebuildRunner) and reported by any. */
@BackOfficeController()
@Roles('admin')
export class RebuildController {
  constructor(
    private readonly runner: RebuildRunner,
    private readonly runs: RebuildRuns,
  ) {}

  @Post(BACK_OFFICE_ROUTES.rebuild)
  @HttpCode(202)
  async start(@Body(OptionalBodyPipe) { projection }: RebuildDto, @CurrentStaff() by: StaffMember) {
    const chosen = allProjections.filter((p) => projection === undefined || p.name === projection);
    const outcome = await this.runner.start(chosen, by.staffId);
    if ('running' in outcome) throw new ApiError(409, 'REBUILD_RUNNING', `Rebuild ${outcome.running} is still running`);
    return successEnvelope('ACCEPTED', { rebuild_id: outcome.started.rebuild_id, status: 'running' } satisfies RebuildStartedView);
  }

  @Get(BACK_OFFICE_ROUTES.rebuildRun)
  async status(@Param(PathIdsPipe) { rebuild_id: id }: PathIds) {
    const view = await this.runs.find(id);
    if (!view) throw new ApiError(404, 'REBUILD_NOT_FOUND', `No rebuild ${id}`);
    return successEnvelope('OK', view);
  }
}
