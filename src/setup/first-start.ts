import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { ensureAdmin, type FirstAdmin } from '../users/bootstrap.js';
import { BILLING_PROCESS, createDemoSet, type DemoUser } from './demo.js';
import { loadIfNeverSetUp, type LoadReport } from '../catalogue/repository.js';
import { starterCatalogue } from './starter-catalogue.js';

export interface Setup {
  admin: FirstAdmin;
  /** Set when the starter catalogue was loaded now. */
  starter?: LoadReport;
  /** Set when the demo set was made now. */
  demo?: DemoUser;
}

/**
 * What a registry needs before it serves: an ADMIN, a catalogue (the starter one, when none was ever set
 * up), and, on the embedded database or when REGISTRY_DEMO asks for it, the demo set. Each is made once.
 */
export async function prepare(db: Database, config: Config): Promise<Setup> {
  const admin = await ensureAdmin(db, config.REGISTRY_ADMIN_USERNAME, config.REGISTRY_ADMIN_PASSWORD);
  const starter = await loadIfNeverSetUp(db, await starterCatalogue());
  const wantsDemo = config.REGISTRY_DEMO ?? config.DATABASE_URL === undefined;
  const demo = wantsDemo ? await createDemoSet(db) : undefined;
  return { admin, starter, demo };
}

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
    lines.push(`  SERVICE_PROVIDER: username: ${demo.username}  password: ${demo.password}  (demo, acts for ${demo.serviceProvider})`);
  }
  if (starter) {
    lines.push(`  Catalogue: the starter catalogue (${starter.processes.added} core Peppol BIS processes); follow the`,
      '             official Peppol code lists with: npx registry load-catalogue reference-data/peppol-codelists-v9.7',
      '             (the release the project ships) or the folder of a newer release');
  }
  if (admin.generatedPassword || demo) lines.push('  These passwords are shown only this once.');
  if (demo) {
    lines.push('', '  Try it:', `    curl -u '${demo.username}:${demo.password}' '${baseUrl}/rest/api/participants'`,
      `    (the demo participants have the Peppol billing process ${BILLING_PROCESS})`);
  }
  lines.push('');
  return lines.join('\n');
}

/** The address a person on this machine uses, also when the server listens on every interface. */
export function baseUrlOf(host: string, port: number): string {
  const local = host === '0.0.0.0' || host === '::' || host === '' ? 'localhost' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}
