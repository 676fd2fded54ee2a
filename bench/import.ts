/**
 * The command-line import as an operator runs it: `registry import-participants <file>` (the built CLI) on a
 * generated JSON-lines file of new participants, timed from start to exit, its resident memory sampled.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dataset } from './dataset.js';
import { norwegianNumberOf } from './keys.js';
import { rssMiB } from './service.js';

export interface ImportRun {
  lines: number;
  seconds: number;
  rowsPerSecond: number;
  peakMiB: number;
  exitCode: number | null;
}

/** Organization numbers of the imported participants: apart from the data set's and scenario 6's (first digit 9, else 3). */
const importedNumber = (i: number) => norwegianNumberOf(i, 9, 3);

/** What an import run needs: the processes the lines name, their providers, and the database settings (environment). */
export type ImportTarget = Pick<Dataset, 'freeProcessIds' | 'providers'> & { database: Record<string, string> };

async function writeLines(
  path: string,
  lines: number,
  data: ImportTarget,
  numberOf: (i: number) => string,
): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 1; i <= lines; i += 1) {
    const line = {
      icd: '0192',
      organizationIdentifier: numberOf(i),
      name: `Importert Testbedrift ${i} AS`,
      processes: data.freeProcessIds.map((identifier) => ({ identifier })),
      contact: { name: 'Kari Nordmann', email: 'kari@example.no', phoneNumber: '+47 22 00 00 00' },
      provider: { identifier: data.providers[i % data.providers.length]?.id },
    };
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

export async function timeImport(
  data: ImportTarget,
  lines: number,
  log: (message: string) => void,
  numberOf: (i: number) => string = importedNumber,
): Promise<ImportRun> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-bench-import-'));
  try {
    const file = join(dir, 'participants.jsonl');
    await writeLines(file, lines, data, numberOf);
    log(`importing ${lines} lines with registry import-participants`);
    const started = performance.now();
    // As an operator runs it: the launcher, so that the Node.js options of bin/registry.js's first line apply.
    const child = spawn('./registry', ['import-participants', file], {
      env: { ...process.env, ...data.database, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    let peakMiB = 0;
    // The process may end between two samples: a sample that finds it gone counts nothing.
    const sampler = setInterval(() => {
      try {
        // An ending process has no VmRSS any more (NaN), which would make the peak NaN.
        peakMiB = Math.max(peakMiB, rssMiB(child.pid as number) || 0);
      } catch {
        /* ended */
      }
    }, 100);
    const [exitCode] = (await once(child, 'exit')) as [number | null];
    clearInterval(sampler);
    const seconds = (performance.now() - started) / 1000;
    if (exitCode !== 0) log(`the import exited ${exitCode}: ${stderr}`);
    return { lines, seconds, rowsPerSecond: lines / seconds, peakMiB, exitCode };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
