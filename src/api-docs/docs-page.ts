/**
 * The OpenAPI documents as one HTML page, rendered here: no scripts, no
 * styles or fonts fetched from elsewhere, so it reads the same on a machine
 * without internet access.
 */

type Json = Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

export function docsPage(documents: { file: string; document: Json }[]): string {
  const sections = documents.map(({ file, document }) => section(file, document)).join('\n');
  const toc = documents
    .map(({ file, document }) => `<li><a href="#${anchor(file)}">${escape(title(document))}</a> (<a href="/docs/${escape(file)}">${escape(file)}</a>)</li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API documents</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 70rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a; }
h2 { border-bottom: 2px solid #ccc; margin-top: 3rem; } h3 { margin-bottom: .2rem; }
.op { border: 1px solid #ddd; border-radius: 6px; padding: .5rem 1rem; margin: 1rem 0; }
.method { font: bold 13px monospace; padding: 2px 6px; border-radius: 4px; background: #e8eef7; text-transform: uppercase; }
code, pre { font: 13px/1.4 ui-monospace, monospace; } pre { background: #f6f6f6; padding: .5rem; overflow-x: auto; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: left; vertical-align: top; }
details > summary { cursor: pointer; }
</style></head><body>
<h1>API documents</h1>
<p>OpenAPI 3.1, served by this service. A test sends real requests and checks every reply against them.</p>
<ul>${toc}</ul>
${sections}
</body></html>
`;
}

function section(file: string, document: Json): string {
  const info = (document.info ?? {}) as Json;
  const paths = (document.paths ?? {}) as Record<string, Json>;
  const operations = Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => operationHtml(method, path, item[method] as Json)),
  );
  const schemas = Object.entries(((document.components ?? {}) as Json).schemas ?? {}).map(
    ([name, schema]) =>
      `<details id="${anchor(`${file}-${name}`)}"><summary><code>${escape(name)}</code></summary><pre>${escape(JSON.stringify(schema, null, 2))}</pre></details>`,
  );
  return `<h2 id="${anchor(file)}">${escape(title(document))}</h2>
<p>${escape(String(info.description ?? ''))}</p>
${operations.join('\n')}
<h3>Schemas</h3>
${schemas.join('\n')}`;
}

function operationHtml(method: string, path: string, op: Json): string {
  const parameters = ((op.parameters ?? []) as Json[]).map(
    (p) => `<tr><td><code>${escape(String(p.name))}</code></td><td>${escape(String(p.in))}</td><td>${escape(String(p.description ?? ''))}</td></tr>`,
  );
  const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
  const responses = Object.entries((op.responses ?? {}) as Record<string, Json>).map(([status, reply]) => {
    const content = (reply.content ?? {}) as Record<string, Json>;
    const schema = Object.values(content)[0]?.schema as Json | undefined;
    const codes = schema ? failureCodes(schema) : [];
    return `<tr><td>${escape(status)}</td><td>${escape(String(reply.description ?? ''))}${codes.length ? `<br><code>${codes.map(escape).join('</code>, <code>')}</code>` : ''}</td></tr>`;
  });
  return `<div class="op"><h3><span class="method">${escape(method)}</span> <code>${escape(path)}</code></h3>
<p><strong>${escape(String(op.summary ?? ''))}</strong> ${escape(String(op.description ?? ''))}</p>
${parameters.length ? `<table><tr><th>Parameter</th><th>In</th><th></th></tr>${parameters.join('')}</table>` : ''}
${body ? `<details><summary>Request body</summary><pre>${escape(JSON.stringify(body.schema, null, 2))}</pre></details>` : ''}
<table><tr><th>Status</th><th>Reply</th></tr>${responses.join('')}</table></div>`;
}

/** The failure codes a reply may carry: its `code` const or enum. */
function failureCodes(schema: Json): string[] {
  const code = ((schema.properties ?? {}) as Json).code as Json | undefined;
  if (!code || ((schema.properties as Json).success as Json | undefined)?.const !== false) return [];
  return typeof code.const === 'string' ? [code.const] : Array.isArray(code.enum) ? (code.enum as string[]) : [];
}

function title(document: Json): string {
  const info = (document.info ?? {}) as Json;
  return `${String(info.title ?? '')} (version ${String(info.version ?? '')})`;
}

function anchor(text: string): string {
  return text.replace(/[^A-Za-z0-9]+/g, '-');
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
