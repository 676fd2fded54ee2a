import { chmodSync, lstatSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes `dir` and everything in it its owner's only (directories 0700, files without their group and other bits:
 * 0600 for what the database writes), also when it exists already with wider modes, and makes what this process
 * creates from now on the same (umask 077): the embedded database keeps personal data and password hashes there.
 * The directory's own mode is what shuts others out; the files' modes are set again whenever called, since PGlite
 * sets some itself.
 */
export function keepOwnerOnly(dir: string): void {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  restrict(dir);
}

function restrict(path: string): void {
  const stats = lstatSync(path);
  if (stats.isSymbolicLink()) return;
  if (!stats.isDirectory()) {
    // The owner's own bits are kept (the database writes no executable, but nothing else in the directory loses one).
    if ((stats.mode & 0o077) !== 0) chmodSync(path, stats.mode & 0o700);
    return;
  }
  chmodSync(path, 0o700);
  for (const name of readdirSync(path)) restrict(join(path, name));
}
