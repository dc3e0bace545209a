/**
 * The one file of a `multipart/form-data` body (RFC 7578), for a report
 * uploaded from a browser's form or `curl -F`. The body is already in memory
 * (at most the upload limit), so the parts are found by searching for the
 * boundary rather than streamed.
 */
export interface UploadedFile {
  fileName: string | null;
  bytes: Buffer;
}

/** Why the body is not one file in multipart/form-data. */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}

/** The boundary a multipart/form-data Content-Type names, or undefined for any other type. */
export function multipartBoundary(contentType: string): string | undefined {
  const [type, ...parameters] = contentType.split(';').map((p) => p.trim());
  if (type.toLowerCase() !== 'multipart/form-data') return undefined;
  for (const parameter of parameters) {
    const match = /^boundary=(?:"([^"]{1,70})"|([^\s";]{1,70}))$/i.exec(parameter);
    if (match) return match[1] ?? match[2];
  }
  throw new MultipartError('multipart/form-data needs a boundary parameter of 1-70 characters');
}

/** The body's one file part: a part with a filename, or the only part there is. Other parts, fields, are ignored. */
export function fileFromMultipart(body: Buffer, boundary: string): UploadedFile {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw new MultipartError('the body has no part that starts with the boundary');
  for (;;) {
    const after = at + delimiter.length;
    if (body.subarray(after, after + 2).toString() === '--') break;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), after);
    if (next < 0) throw new MultipartError('the body ends before its closing boundary');
    parts.push(body.subarray(after, next));
    at = next + 2;
  }
  const files = parts.map(partOf);
  const named = files.filter((f) => f.fileName !== null);
  if (named.length > 1 || (named.length === 0 && files.length !== 1)) {
    throw new MultipartError(`send one file: the body has ${named.length} file parts among ${files.length} parts`);
  }
  return named[0] ?? files[0];
}

/** A part: headers up to a blank line, then its content. */
function partOf(part: Buffer): UploadedFile {
  // The boundary line ends with CRLF (after optional whitespace), then the headers.
  const lineEnd = part.indexOf('\r\n');
  const headersEnd = part.indexOf('\r\n\r\n', lineEnd);
  if (lineEnd < 0 || headersEnd < 0) throw new MultipartError('a part has no blank line between its headers and its content');
  const headers = part.subarray(lineEnd + 2, headersEnd).toString('utf8');
  const disposition = /^content-disposition:(.*)$/im.exec(headers)?.[1] ?? '';
  const fileName = /\bfilename="([^"]*)"/i.exec(disposition)?.[1] ?? /\bfilename=([^\s;]+)/i.exec(disposition)?.[1] ?? null;
  return { fileName: fileName === null ? null : fileName.replace(/^.*[\\/]/, '').slice(0, 255), bytes: part.subarray(headersEnd + 4) };
}
