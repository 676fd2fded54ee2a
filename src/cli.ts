import process from 'node:process';
import { runCommand, unlessReaderClosed } from './command-line.js';

/**
 * The operator's command line as a process (`./registry <command>`, through bin/registry.js): the command of its
 * arguments (src/command-line.ts) on its own standard output, standard error and environment, its status the exit code.
 */

// Output still buffered when the reader left fails after the command is done; that is the same quiet end.
process.stdout.on('error', unlessReaderClosed);

void runCommand(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (status) => {
    process.exitCode = status;
  },
);
