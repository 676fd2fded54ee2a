#!/usr/bin/env -S node --max-semi-space-size=8
// `./registry <command>` (or `npx registry`): runs the built command line (`npm run build`, or `npm start` once, makes dist/).
// A young generation of 8 MiB (Node's default here is 64 MiB per semi-space): an import's batches are garbage within a
// second, and the larger one only held some 100 MB more of resident memory for no speed (docs/design/performance.md).
import { existsSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import process from 'node:process';
import { URL } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('registry: the project is not built yet; run `npm run build` first.\n');
  process.exit(1);
}
// Node keeps the compiled code of the modules a command loads (in the system's temporary directory), so the next
// command compiles none of them again: a fifth of a command's start (docs/design/operations.md, "The command line").
enableCompileCache();
await import(cli.href);
