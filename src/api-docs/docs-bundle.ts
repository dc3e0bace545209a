import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bundleBrowserScript } from '../infrastructure/http/browser-bundle';

/** The page's own script: page/main.ts beside this module. */
export const DOCS_PAGE_ENTRY = join(__dirname, 'page', 'main.ts');

/** The page's script as the browser gets it: one minified ES module, nothing from elsewhere. */
export function bundleDocsPage(entry = DOCS_PAGE_ENTRY): Promise<Buffer> {
  return bundleBrowserScript(entry);
}

/** What the compiled service serves from swagger-ui-dist, and Swagger UI's licence, which goes with it. */
const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'];

/** `npm run build`: the bundle and Swagger UI's files written where the compiled service serves them from. */
if (require.main === module) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: docs-bundle.ts OUTPUT_DIRECTORY');
  bundleDocsPage()
    .then((bundle) => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'docs.js'), bundle);
      const swaggerUi = dirname(require.resolve('swagger-ui-dist/package.json'));
      for (const file of SWAGGER_UI_FILES) copyFileSync(join(swaggerUi, file), join(dir, file));
    })
    .catch((error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    });
}
