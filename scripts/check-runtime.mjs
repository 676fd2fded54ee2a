// The runtime npm scripts run on must be the major version `engines` names (the `node` package brings it).
import { readFileSync } from 'node:fs';
import process from 'node:process';
import console from 'node:console';
import { fileURLToPath, URL } from 'node:url';

const packageJson = new URL('../package.json', import.meta.url);

/** Why this runtime is not the project's, or undefined when it is. */
export function runtimeProblem() {
  const { engines } = JSON.parse(readFileSync(packageJson, 'utf8'));
  const expected = Number(/\d+/.exec(engines.node)?.[0]);
  const actual = Number(process.versions.node.split('.')[0]);
  if (actual === expected) return undefined;
  return (
    `This runs on Node.js ${process.version} (${process.execPath}); the project needs Node.js ${expected}, ` +
    'which `npm ci` installs into node_modules/.bin/node for npm scripts. Run it through npm (`npm test`, `npx vitest`).'
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problem = runtimeProblem();
  if (problem) {
    console.error(problem);
    process.exit(1);
  }
  console.log(`Node.js ${process.version}`);
}
