import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../infrastructure/http/api-error';
import { MetricsEndpoint } from './metrics-endpoint';

/** GET /metrics on the API's port, unless METRICS_PORT moves it (see MetricsEndpoint). */
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(MetricsEndpoint) private readonly endpoint: MetricsEndpoint) {}

  @Get()
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() response: Response): Promise<void> {
    if (!this.endpoint.onApiPort) throw new ApiError(404, 'NOT_FOUND', 'No such route');
    const reply = await this.endpoint.reply(authorization);
    // Written as is: Express's send() would rewrite prom-client's Content-Type.
    response.writeHead(reply.status, reply.headers).end(reply.body);
  }
}
