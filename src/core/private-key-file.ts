import { readFileSync, statSync } from 'node:fs';
import { errorCodeOf } from './errors.js';

/** A private key file the start must not use: one line for the operator, naming the setting, the file and why. */
export class KeyFileError extends Error {}

/**
 * The private key file a setting names, refused as ssh refuses one (`UNPROTECTED PRIVATE KEY FILE`) when its group or
 * others have any permission on it: whoever can read the SMP's key can sign as the SMP and present its certificate to
 * the SML. Read at the start only, so a refusal stops the start.
 */
export function readPrivateKeyFile(setting: string, path: string): Buffer {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (error) {
    throw new KeyFileError(`${setting} names ${path}, which cannot be read (${errorCodeOf(error) ?? 'unreadable'})`);
  }
  if ((mode & 0o077) !== 0) {
    const octal = (mode & 0o777).toString(8).padStart(4, '0');
    throw new KeyFileError(
      `${setting} names ${path}, whose mode ${octal} gives its group or others access: ` +
        `a private key must be its owner's only (chmod 600 ${path})`,
    );
  }
  return readFileSync(path);
}
