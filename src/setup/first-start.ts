import { closeSync, fchmodSync, mkdirSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Database } from '../db/database.js';
import { ensureAdmin, type FirstAdmin } from '../users/bootstrap.js';
import { BILLING_PROCESS, createDemoSet, type DemoUser } from './demo.js';
import { loadIfNeverSetUp, type LoadReport } from '../code-lists/repository.js';
import { starterCatalogue } from './starter-catalogue.js';

export interface Setup {
  admin: FirstAdmin;
  /** Set when the starter catalogue was loaded now. */
  starter?: LoadReport;
  /** Set when the demo set was made now. */
  demo?: DemoUser;
}

/** What the first start reads of the configuration: the entry points' Config has it (config.ts is above this floor). */
export interface SetupSettings {
  REGISTRY_ADMIN_USERNAME: string;
  REGISTRY_ADMIN_PASSWORD?: string;
  REGISTRY_DEMO?: boolean;
  DATABASE_URL?: string;
}

/**
 * What a registry needs before it serves: an ADMIN, a catalogue (the starter one, when none was ever set
 * up), and, on the embedded database or when REGISTRY_DEMO asks for it, the demo set. Each is made once.
 */
export async function prepare(db: Database, config: SetupSettings): Promise<Setup> {
  const admin = await ensureAdmin(db, config.REGISTRY_ADMIN_USERNAME, config.REGISTRY_ADMIN_PASSWORD);
  const starter = await loadIfNeverSetUp(db, await starterCatalogue());
  const wantsDemo = config.REGISTRY_DEMO ?? config.DATABASE_URL === undefined;
  const demo = wantsDemo ? await createDemoSet(db) : undefined;
  return { admin, starter, demo };
}

/** The first start's message holds a password it made (the ADMIN's or the demo provider's). */
const showsPasswords = ({ admin, demo }: Setup) => Boolean(admin.generatedPassword || demo);

/**
 * What a newcomer needs to try every operation: addresses and credentials. Only when this start made
 * something, so passwords are printed once.
 */
export function welcome(setup: Setup, baseUrl: string): string | undefined {
  const { admin, starter, demo } = setup;
  if (!admin.created && !starter && !demo) return undefined;
  const lines = [
    '',
    '=== Registry ready ===',
    `  Console:   ${baseUrl}/  (public lookup; sign in with the credentials below)`,
    `  API:       ${baseUrl}/rest/api`,
    `  API docs:  ${baseUrl}/rest/resources/docs`,
  ];
  if (admin.created) {
    const password = admin.generatedPassword ?? '(the value of REGISTRY_ADMIN_PASSWORD)';
    lines.push(`  ADMIN:            username: ${admin.username}  password: ${password}`);
  }
  if (demo) {
    lines.push(
      `  SERVICE_PROVIDER: username: ${demo.username}  password: ${demo.password}  (demo, acts for ${demo.serviceProvider})`,
    );
  }
  if (starter) {
    lines.push(
      `  Catalogue: the starter catalogue (${starter.processes.added} core Peppol processes); follow the`,
      '             official Peppol code lists with: ./registry load-catalogue reference-data/peppol-codelists-v9.7',
      '             (the release the project ships) or the folder of a newer release',
    );
  }
  if (showsPasswords(setup)) lines.push('  These passwords are shown only this once.');
  if (demo) {
    lines.push(
      '',
      '  Try it:',
      `    curl -u '${demo.username}:${demo.password}' '${baseUrl}/rest/api/participants'`,
      `    (the demo participants have the Peppol billing process ${BILLING_PROCESS})`,
    );
  }
  lines.push('');
  return lines.join('\n');
}

/** The file the first start's message goes into when standard output is not a terminal. */
const WELCOME_FILE = 'first-start.txt';

export interface WelcomeDelivery {
  /** Standard output is a terminal: a person reads it, no log shipper collects it. */
  terminal: boolean;
  /** Where the file goes: the embedded database's data directory; none: a new private directory of the OS's temporary one. */
  directory: string | undefined;
  /** Writes the message where the log's lines go. */
  print: (message: string) => void;
  /** Says where the message was put (never what it holds). */
  announce: (path: string) => void;
}

/**
 * Hands the first start's message to the operator once, and a password it holds never to a collected stream: on a
 * terminal, or without a password, it is printed; otherwise it goes into a file that only its owner can read, and
 * only the file's path is announced.
 */
export function deliverWelcome(
  setup: Setup,
  message: string,
  { terminal, directory, print, announce }: WelcomeDelivery,
): void {
  if (terminal || !showsPasswords(setup)) {
    print(message);
    return;
  }
  if (directory) mkdirSync(directory, { recursive: true, mode: 0o700 });
  const path = resolve(directory ?? mkdtempSync(join(tmpdir(), 'registry-')), WELCOME_FILE);
  const file = openSync(path, 'w', 0o600);
  try {
    fchmodSync(file, 0o600); // a file left by an earlier start keeps its mode otherwise
    writeFileSync(file, `${message}\n`);
  } finally {
    closeSync(file);
  }
  announce(path);
}

/** The sentence that says where the first start's message is. */
export const welcomeFileNotice = (path: string) =>
  `first start: the addresses and the generated passwords are in ${path} (readable by its owner only); read it, then delete it`;

/** The address a person on this machine uses, also when the server listens on every interface. */
export function baseUrlOf(host: string, port: number): string {
  const local = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}
