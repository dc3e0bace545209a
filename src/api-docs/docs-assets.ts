import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The files of the page at /docs, a fixed map (a request names one of
 * these, never a path): Swagger UI's script and stylesheet from the
 * swagger-ui-dist package, the page and its stylesheet from the assets
 * folder beside this module, and the page's script, bundled from page/ by
 * esbuild.
 *
 * Compiled (`npm run build`), all of them were copied or bundled into the
 * assets folder, and are read from there once at start-up: a missing file
 * stops the service there. From source (`npm start`, the tests), Swagger UI
 * is read from node_modules and the script is bundled in memory on its
 * first request, as the console's is.
 */
const DIR = join(__dirname, 'assets');
const FROM_SOURCE = existsSync(join(__dirname, 'page'));
const SCRIPT = 'docs.js';

export interface DocsAsset {
  type: string;
  body: Buffer;
}

const vendorDir = () => (FROM_SOURCE ? dirname(require.resolve('swagger-ui-dist/package.json')) : DIR);
const read = (dir: string, file: string) => readFileSync(join(dir, file));
const script = (body: Buffer): DocsAsset => ({ type: 'text/javascript; charset=utf-8', body });

const STATIC = new Map<string, DocsAsset>([
  ['swagger-ui-bundle.js', script(read(vendorDir(), 'swagger-ui-bundle.js'))],
  ['swagger-ui.css', { type: 'text/css; charset=utf-8', body: read(vendorDir(), 'swagger-ui.css') }],
  ['docs.css', { type: 'text/css; charset=utf-8', body: read(DIR, 'docs.css') }],
]);

function prebuiltScript(): DocsAsset {
  const file = join(DIR, SCRIPT);
  if (!existsSync(file)) throw new Error(`The API reference's script ${file} is missing: npm run build bundles it`);
  return script(readFileSync(file));
}

let bundled: Promise<DocsAsset> | undefined = FROM_SOURCE ? undefined : Promise.resolve(prebuiltScript());

/** Bundled once per process; a failed bundle is tried again on the next request. */
function pageScript(): Promise<DocsAsset> {
  if (!bundled) {
    bundled = import('./docs-bundle').then(({ bundleDocsPage }) => bundleDocsPage()).then(script);
    bundled.catch(() => (bundled = undefined));
  }
  return bundled;
}

/** The named file, or undefined when it is not one of the page's. */
export async function docsAsset(file: string): Promise<DocsAsset | undefined> {
  return file === SCRIPT ? pageScript() : STATIC.get(file);
}

export const DOCS_PAGE = read(DIR, 'index.html');
