import { readFileSync } from 'node:fs';
import { defineConfig } from 'vite';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** The console's bundle: built into dist/console, served by the service at / with assets under /assets/. */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    assetsDir: 'assets',
    // No inline data: URIs and no inline scripts: the pages' CSP allows only same-origin files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // The registry's version (CHANGELOG.md), shown at the foot of every page.
  define: { __REGISTRY_VERSION__: JSON.stringify(version) },
});
