import Ajv2020 from 'ajv/dist/2020';
import type { RawReply } from '../support/raw-http';

type Json = any;

export interface Reply {
  status: number;
  headers: Headers | Record<string, string>;
  contentType: string;
  text: string;
  body: Json;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** JSON Pointer escaping of one reference token. */
const token = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * One OpenAPI document and a validator of replies against it. Each reply is
 * matched to the operation of its method and path template, then to the
 * response of its status and media type, whose schema (JSON Schema 2020-12,
 * refs into the document resolved by ajv) must accept the body.
 */
export class DocumentedApi {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  private readonly id: string;
  private readonly templates: { template: string; pattern: RegExp }[];
  /** "METHOD template status" of every reply checked. */
  readonly seen = new Set<string>();
  readonly problems: string[] = [];

  constructor(
    readonly name: string,
    readonly document: Json,
  ) {
    this.id = `https://topup.test/${name}`;
    this.ajv.addSchema({ ...document, $id: this.id });
    this.templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  /** The path template a concrete path matches, if any. */
  templateOf(path: string): string | undefined {
    return this.templates.find((t) => t.pattern.test(path))?.template;
  }

  operations(): string[] {
    return Object.entries(this.document.paths as Record<string, Json>).flatMap(([template, item]) =>
      METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${template}`),
    );
  }

  /**
   * Checks one reply: documented operation, documented status, documented
   * media type, body valid against the schema, X-Request-Id present.
   * A method the path does not document must be refused as the document
   * says for that path (405 on the merchant API, 404 in the back office).
   */
  check(method: string, path: string, reply: Reply): void {
    const where = `${method} ${path} -> ${reply.status}`;
    const header = (name: string) => (reply.headers instanceof Headers ? reply.headers.get(name) : reply.headers[name.toLowerCase()]) ?? undefined;
    if (!/^[\x21-\x7e]{1,128}$/.test(header('x-request-id') ?? '')) this.problems.push(`${where}: no X-Request-Id`);
    const template = this.templateOf(path.split('?')[0]);
    if (!template) {
      this.expectRefusal(where, reply, 404, 'NOT_FOUND');
      return;
    }
    const item = this.document.paths[template];
    const operation = item[method.toLowerCase()];
    if (!operation) {
      const documented = METHODS.find((m) => item[m])!;
      const status = item[documented].responses['405'] ? 405 : 404;
      this.expectRefusal(
        where,
        reply,
        status,
        status === 405 ? 'METHOD_NOT_ALLOWED' : 'NOT_FOUND',
        `/paths/${token(template)}/${documented}/responses/${status}`,
      );
      return;
    }
    this.seen.add(`${method.toUpperCase()} ${template} ${reply.status}`);
    const response = operation.responses[String(reply.status)];
    if (!response) {
      this.problems.push(`${where}: status ${reply.status} is not documented (${reply.text.slice(0, 200)})`);
      return;
    }
    const pointer = `/paths/${token(template)}/${method.toLowerCase()}/responses/${reply.status}`;
    this.validateBody(where, reply, response, pointer);
    for (const name of Object.keys(response.headers ?? {})) {
      if (name !== 'X-Request-Id' && name !== 'X-Next-After-Revision' && header(name) === undefined) this.problems.push(`${where}: no ${name} header`);
    }
  }

  private expectRefusal(where: string, reply: Reply, status: number, code: string, pointer?: string): void {
    if (reply.status !== status) {
      this.problems.push(`${where}: expected ${status} for an undocumented route or method`);
      return;
    }
    if (pointer) this.validateBody(where, reply, this.resolve(pointer), pointer);
    else if (reply.body?.code !== code) this.problems.push(`${where}: expected ${code}, got ${reply.text.slice(0, 200)}`);
  }

  private validateBody(where: string, reply: Reply, response: Json, pointer: string): void {
    const content = response.content as Record<string, Json> | undefined;
    if (!content) return;
    const mediaType = Object.keys(content).find((type) => reply.contentType.split(';')[0].trim() === type.split(';')[0].trim());
    if (!mediaType) {
      this.problems.push(`${where}: Content-Type ${reply.contentType} is not documented (${Object.keys(content).join(', ')})`);
      return;
    }
    const isJson = mediaType === 'application/json';
    const body = isJson ? reply.body : reply.text;
    if (isJson && body === undefined) {
      this.problems.push(`${where}: not JSON: ${reply.text.slice(0, 200)}`);
      return;
    }
    const validate = this.ajv.getSchema(`${this.id}#${pointer}/content/${token(mediaType)}/schema`);
    if (!validate) throw new Error(`no schema at ${pointer} for ${mediaType}`);
    if (!validate(body)) {
      this.problems.push(`${where}: ${this.ajv.errorsText(validate.errors, { dataVar: 'reply' })}\n  reply: ${reply.text.slice(0, 400)}`);
    }
  }

  private resolve(pointer: string): Json {
    return pointer
      .split('/')
      .slice(1)
      .reduce((node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
  }
}

/** A fetch Response read whole, as DocumentedApi checks it. */
export async function readReply(response: Response): Promise<Reply> {
  const text = await response.text();
  let body: Json;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, contentType: response.headers.get('content-type') ?? '', text, body };
}

/** A raw exchange (bytes that are not HTTP) as a Reply. */
export function rawReply(raw: RawReply): Reply {
  let body: Json;
  try {
    body = JSON.parse(raw.body);
  } catch {
    body = undefined;
  }
  return { status: raw.status ?? 0, headers: raw.headers, contentType: raw.headers['content-type'] ?? '', text: raw.body, body };
}
