import { build } from 'esbuild';

/**
 * A page's script as the browser gets it: one ES module with everything it
 * imports, minified, for the browsers of the last few years. Type-only imports
 * are erased, so a bundle holds the page's own code and nothing else.
 */
export async function bundleBrowserScript(entry: string): Promise<Buffer> {
  const { outputFiles } = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  });
  return Buffer.from(outputFiles[0].contents);
}
