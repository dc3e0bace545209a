/**
 * The runnable examples of a Markdown document: every fenced block marked
 * `sh`, `bash` or `shell` (a shell example) or `ts` or `typescript` (a
 * TypeScript example). Other blocks (json, http, sql, text ...) show output
 * or reference and are not run.
 *
 * An HTML comment on the line before a block, which GitHub does not show,
 * tells the docs test what to do with it:
 *
 *   <!-- doc-test: skip REASON -->   not run, for REASON (Docker, production secrets ...)
 *   <!-- doc-test: file PATH -->     saved as PATH, relative to the current directory, not run
 */
export type Language = 'shell' | 'typescript';

export interface DocBlock {
  /** The document, relative to the repository (`docs/quick-start.md`). */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: Language;
  code: string;
  directive?: { kind: 'skip'; reason: string } | { kind: 'file'; path: string };
}

const LANGUAGES: Record<string, Language> = { sh: 'shell', bash: 'shell', shell: 'shell', ts: 'typescript', typescript: 'typescript' };
const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const DIRECTIVE = /^\s*<!--\s*doc-test:(.*?)-->\s*$/;

/** The blocks of one document in order. Throws on a directive it cannot use, naming doc:line. */
export function extractBlocks(doc: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let pending: { line: number; text: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const directive = DIRECTIVE.exec(lines[i]);
    if (directive) {
      pending = { line: i + 1, text: directive[1].trim() };
      continue;
    }
    const fence = FENCE.exec(lines[i]);
    if (!fence) {
      if (pending && lines[i].trim() !== '') throw new Error(`${doc}:${pending.line}: a doc-test comment must come right before a code block`);
      continue;
    }
    const [, indent, marker, info] = fence;
    const close = lines.findIndex((l, j) => j > i && l.trim().startsWith(marker[0].repeat(marker.length)) && l.trim().replace(/[`~]/g, '') === '');
    if (close < 0) throw new Error(`${doc}:${i + 1}: a code block that is never closed`);
    const code = lines
      .slice(i + 1, close)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join('\n');
    const language = LANGUAGES[info.toLowerCase()];
    if (pending && !language) throw new Error(`${doc}:${pending.line}: a doc-test comment on a block that is neither shell nor TypeScript`);
    if (language) blocks.push({ doc, line: i + 1, language, code: `${code}\n`, directive: pending && parseDirective(doc, pending) });
    pending = undefined;
    i = close;
  }
  return blocks;
}

function parseDirective(doc: string, { line, text }: { line: number; text: string }): DocBlock['directive'] {
  const [kind, ...rest] = text.split(/\s+/);
  const argument = rest.join(' ');
  if (kind === 'skip' && argument) return { kind: 'skip', reason: argument };
  if (kind === 'file' && /^[\w./-]+$/.test(argument) && !argument.split('/').includes('..')) return { kind: 'file', path: argument };
  throw new Error(`${doc}:${line}: unknown doc-test comment "${text}": use "skip REASON" or "file PATH"`);
}
