import { Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { ConsoleSessions, CSRF_HEADER, SESSION_LIFETIME_SECONDS, sessionCookie, sessionCookieHeader, StaffAuthenticator } from '../back-office';
import { AppConfig } from '../config/config';
import { ApiError, successEnvelope } from '../infrastructure/http/api-error';
import { arrivedOverTls } from '../infrastructure/http/arrived-over-tls';
import { readRawBody } from '../infrastructure/http/raw-body';
import { missingField } from '../infrastructure/http/request-errors';
import { parseJsonObject } from '../infrastructure/http/strict-json';
import { APP_CONFIG } from '../infrastructure/infrastructure.tokens';
import { CONSOLE_PAGE, consoleAsset } from './console-assets';
import type { ConsoleSessionView } from './console-session.view';

/** The header only the console's own script sends: a cross-site form cannot set it, and a cross-site fetch with it needs a preflight we never grant. */
const CONSOLE_HEADER = 'x-console';

/**
 * The staff console: a page and its script, which speak to /admin/v1 with a
 * session cookie instead of a bearer token, and the routes that turn a staff
 * token into that cookie and back. Every permission is the API's own: the
 * console only hides what a role may not do; the API refuses it. Its
 * Content-Security-Policy and other security headers are set at the HTTP
 * edge, with every reply's (infrastructure/http/surface-policies.ts).
 */
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly authenticator: StaffAuthenticator,
    private readonly sessions: ConsoleSessions,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  page(@Res() response: Response) {
    response.type('html').send(CONSOLE_PAGE);
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Res() response: Response) {
    const asset = await consoleAsset(file);
    if (!asset) throw new ApiError(404, 'NOT_FOUND', 'No such route');
    response.type(asset.type).send(asset.body);
  }

  /**
   * Who is signed in, with the CSRF token the page must send with every
   * change. Without a session cookie nobody is, which is no error: null,
   * so that the sign-in page loads without a failed request. A cookie whose
   * session ended is refused, and cleared.
   */
  @Get('session')
  async current(@Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const cookie = sessionCookie(request);
    if (cookie === undefined) return successEnvelope('OK', null);
    const session = await this.sessions.find(cookie);
    if (!session) {
      response.setHeader('Set-Cookie', sessionCookieHeader('', { secure: arrivedOverTls(request, this.config.trustProxy), maxAgeSeconds: 0 }));
      throw new ApiError(401, 'UNAUTHORIZED', 'Not signed in');
    }
    return successEnvelope('OK', {
      staff_id: session.staff.staffId,
      name: session.name,
      role: session.staff.role,
      csrf_token: session.csrfToken,
    } satisfies ConsoleSessionView);
  }

  /** Sign-in: the token travels once, in this body; the browser keeps only an HttpOnly cookie that names the session. */
  @Post('session')
  @HttpCode(201)
  async signIn(@Req() request: Request, @Res({ passthrough: true }) response: Response) {
    this.refuseCrossSite(request);
    const token = parseJsonObject(await readRawBody(request, 4096)).token;
    if (token === undefined) throw missingField('token');
    const staff = typeof token === 'string' ? await this.authenticator.authenticate(`Bearer ${token}`) : undefined;
    if (!staff) throw new ApiError(401, 'UNAUTHORIZED', 'That token is not a valid staff token (it may have been rotated, or its member disabled)');
    const { sessionId } = await this.sessions.open(staff, token as string);
    response.setHeader(
      'Set-Cookie',
      sessionCookieHeader(sessionId, { secure: arrivedOverTls(request, this.config.trustProxy), maxAgeSeconds: SESSION_LIFETIME_SECONDS }),
    );
    const session = (await this.sessions.find(sessionId))!;
    return successEnvelope('OK', { staff_id: staff.staffId, name: session.name, role: staff.role, csrf_token: session.csrfToken } satisfies ConsoleSessionView);
  }

  @Delete('session')
  async signOut(@Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const cookie = sessionCookie(request);
    const session = cookie === undefined ? undefined : await this.sessions.find(cookie);
    if (session) {
      const given = request.headers[CSRF_HEADER];
      if (typeof given !== 'string' || given.length !== session.csrfToken.length || !timingSafeEqual(Buffer.from(given), Buffer.from(session.csrfToken))) {
        throw new ApiError(403, 'CSRF_TOKEN_INVALID', `Signing out needs the session's CSRF token in the ${CSRF_HEADER} header`);
      }
      await this.sessions.close(cookie!);
    }
    response.setHeader('Set-Cookie', sessionCookieHeader('', { secure: arrivedOverTls(request, this.config.trustProxy), maxAgeSeconds: 0 }));
    return successEnvelope('OK', { signed_out: true });
  }

  /** Sign-in has no session yet to hold a CSRF token, so it is kept to the console's own script (login CSRF). */
  private refuseCrossSite(request: Request) {
    const origin = request.headers.origin;
    const host = request.headers.host;
    const sameOrigin = origin === undefined || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`));
    if (request.headers[CONSOLE_HEADER] !== '1' || !sameOrigin) {
      throw new ApiError(403, 'CSRF_TOKEN_INVALID', 'Sign in from the console page');
    }
  }
}

/**
 * Browsers ask every origin for /favicon.ico, whatever the page links: the
 * console's icon answers, so that no page logs a 404 for it.
 */
@Controller()
export class FaviconController {
  @Get('favicon.ico')
  async icon(@Res() response: Response) {
    const icon = await consoleAsset('favicon.ico');
    if (!icon) throw new ApiError(404, 'NOT_FOUND', 'No such route');
    response.type(icon.type).send(icon.body);
  }
}
