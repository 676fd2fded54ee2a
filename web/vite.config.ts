import { defineConfig } from 'vite';

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
});
