import { fileFromMultipart, MultipartError, multipartBoundary } from './multipart';

const body = (boundary: string, ...parts: string[]) => Buffer.from(`${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`);
const file = (name: string, content: string) => `Content-Disposition: form-data; name="report"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n${content}`;
const field = (name: string, value: string) => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`;

describe('multipart/form-data: the one file of an upload', () => {
  it('finds the boundary, quoted or not, and refuses a multipart type without one', () => {
    expect(multipartBoundary('multipart/form-data; boundary=----x1')).toBe('----x1');
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('text/csv')).toBeUndefined();
    expect(() => multipartBoundary('multipart/form-data')).toThrow(MultipartError);
  });

  it('takes the file part, its name and its bytes exactly (line breaks inside kept), beside other fields', () => {
    const content = 'order_no,status\r\nT1,delivered\r\n';
    const upload = fileFromMultipart(body('XyZ', field('note', 'hello'), file('C:\\reports\\nov.csv', content)), 'XyZ');
    expect(upload.fileName).toBe('nov.csv');
    expect(upload.bytes.toString()).toBe(content);
  });

  it('takes a lone part without a file name (curl -F "report=<file.csv")', () => {
    expect(fileFromMultipart(body('b', field('report', 'a,b')), 'b')).toEqual({ fileName: null, bytes: Buffer.from('a,b') });
  });

  it('takes a preamble before the first boundary', () => {
    const bytes = Buffer.concat([Buffer.from('ignored preamble\r\n'), body('b', file('r.csv', 'x'))]);
    expect(fileFromMultipart(bytes, 'b').bytes.toString()).toBe('x');
  });

  it.each([
    ['two files', body('b', file('a.csv', '1'), file('b.csv', '2')), /send one file: the body has 2 file parts/],
    ['fields and no file', body('b', field('a', '1'), field('b', '2')), /send one file: the body has 0 file parts among 2/],
    ['no boundary in the body', Buffer.from('plain text'), /no part that starts with the boundary/],
    ['no closing boundary', Buffer.from(`--b\r\n${file('a.csv', 'x')}`), /ends before its closing boundary/],
    ['a part without headers', Buffer.from('--b\r\nno blank line\r\n--b--'), /no blank line between its headers and its content/],
  ])('refuses %s', (_name, bytes, message) => {
    expect(() => fileFromMultipart(bytes, 'b')).toThrow(message);
  });
});
