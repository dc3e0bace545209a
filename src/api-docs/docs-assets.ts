import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PageAsset, pageAssets, SCRIPT_TYPE, STYLESHEET_TYPE } from '../infrastructure/http/page-assets';

/**
 * The files of the page at /docs: Swagger UI's script and stylesheet from
 * the swagger-ui-dist package, the page and its stylesheet from the assets
 * folder beside this module, and the page's script, bundled from page/ by
 * esbuild. In a build, all of them were copied or bundled into the assets
 * folder; from source (`npm start`, the tests), Swagger UI is read from
 * node_modules and the script is bundled in memory on its first request.
 */
const DIR = join(__dirname, 'assets');
const FROM_SOURCE = existsSync(join(__dirname, 'page'));
const VENDOR_DIR = FROM_SOURCE ? dirname(require.resolve('swagger-ui-dist/package.json')) : DIR;

/** The named file, or undefined when it is not one of the page's. */
export const docsAsset: (file: string) => Promise<PageAsset | undefined> = pageAssets({
  page: 'The API reference',
  dir: DIR,
  fromSource: FROM_SOURCE,
  script: 'docs.js',
  files: new Map([
    ['swagger-ui-bundle.js', { type: SCRIPT_TYPE, body: readFileSync(join(VENDOR_DIR, 'swagger-ui-bundle.js')) }],
    ['swagger-ui.css', { type: STYLESHEET_TYPE, body: readFileSync(join(VENDOR_DIR, 'swagger-ui.css')) }],
    ['docs.css', { type: STYLESHEET_TYPE, body: readFileSync(join(DIR, 'docs.css')) }],
  ]),
  bundle: () => import('./docs-bundle').then(({ bundleDocsPage }) => bundleDocsPage()),
});

export const DOCS_PAGE = readFileSync(join(DIR, 'index.html'));
