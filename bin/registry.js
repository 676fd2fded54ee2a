#!/usr/bin/env node
// `npx registry <command>`: runs the built command line (`npm run build`, or `npm start` once, makes dist/).
import { existsSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('registry: the project is not built yet; run `npm run build` first.\n');
  process.exit(1);
}
await import(cli.href);
