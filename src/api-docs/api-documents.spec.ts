import 'reflect-metadata';
import { Body, Controller, Get, Post } from '@nestjs/common';
import { IsEmail, IsString } from 'class-validator';
import { DtoBodyPipe } from '../infrastructure/http/dto-body-pipe';
import { BodyRules } from '../infrastructure/http/dto-body-validator';
import { withRoutes } from './api-documents';
import { nestRoutes } from './nest-routes';
import { failures } from './schema-kit';

const RULES: BodyRules = { nullIs: 'a value', order: 'missing first' };

class NameDto {
  @IsString()
  name!: string;
}

class EmailDto {
  @IsEmail()
  email!: string;
}

@Controller('things')
class ThingsController {
  @Get(':thing_id')
  read() {}

  @Post()
  create(@Body(new DtoBodyPipe(RULES)) _body: NameDto) {}

  @Post('by-email')
  byEmail(@Body(new DtoBodyPipe(RULES)) _body: EmailDto) {}

  @Post('undocumented')
  hidden() {}
}

const BODY_REFUSALS = failures({
  400: { codes: ['INVALID_JSON', 'MISSING_REQUIRED_FIELD'], description: 'bad body' },
  422: { codes: ['VALIDATION_FAILED'], description: 'bad field' },
});

const document = () => ({
  info: { title: 'Things' },
  paths: {
    '/things/{thing_id}': { get: { responses: {} } },
    '/things': { post: { responses: BODY_REFUSALS } },
    '/things/by-email': { post: { responses: BODY_REFUSALS } },
    '/things/gone': { delete: { responses: {} } },
  },
  components: { schemas: {} },
});

describe('the documents against the controllers', () => {
  it('reads each route, its path template and the DTO its body is validated against, from the metadata Nest mounts it by', () => {
    expect(nestRoutes([ThingsController]).map(({ method, path, handler, body }) => [method, path, handler, body?.dto.name])).toEqual([
      ['get', '/things/{thing_id}', 'ThingsController.read', undefined],
      ['post', '/things', 'ThingsController.create', 'NameDto'],
      ['post', '/things/by-email', 'ThingsController.byEmail', 'EmailDto'],
      ['post', '/things/undocumented', 'ThingsController.hidden', undefined],
    ]);
  });

  it('puts the DTO schema in as the request body, and names whatever does not fit', () => {
    const { document: built, problems } = withRoutes(document(), nestRoutes([ThingsController]));
    expect(built.paths['/things'].post.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/NameBody' } } },
    });
    expect(built.components.schemas.NameBody).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      required: ['name'],
      additionalProperties: false,
    });
    expect(problems).toEqual([
      'POST /things/by-email (ThingsController.byEmail): EmailDto.email: @isEmail has no JSON Schema in dto-json-schema.ts',
      'POST /things/undocumented (ThingsController.hidden) is served but not in the document "Things"',
      'DELETE /things/gone is in the document "Things" but no controller serves it',
    ]);
  });

  it('refuses a body written by hand beside its DTO, and a body check whose refusals the replies leave out', () => {
    const written = document();
    Object.assign(written.paths['/things'].post, { requestBody: { content: { 'application/json': { schema: {} } } } });
    written.paths['/things/by-email'] = { post: { responses: {} } } as never;
    const { problems } = withRoutes(written, nestRoutes([ThingsController]).slice(0, 2));
    expect(problems).toEqual([
      'POST /things (ThingsController.create): its request body is written by hand, but comes from NameDto',
      'POST /things/by-email is in the document "Things" but no controller serves it',
      'DELETE /things/gone is in the document "Things" but no controller serves it',
    ]);
    const silent = document();
    silent.paths['/things'].post.responses = {};
    expect(withRoutes(silent, nestRoutes([ThingsController]).slice(1, 2)).problems).toEqual([
      'POST /things (ThingsController.create): its body can be refused with 400 INVALID_JSON, which its replies do not list',
      'POST /things (ThingsController.create): its body can be refused with 422 VALIDATION_FAILED, which its replies do not list',
      'POST /things (ThingsController.create): its body can be refused with 400 MISSING_REQUIRED_FIELD, which its replies do not list',
      'GET /things/{thing_id} is in the document "Things" but no controller serves it',
      'POST /things/by-email is in the document "Things" but no controller serves it',
      'DELETE /things/gone is in the document "Things" but no controller serves it',
    ]);
  });
});
