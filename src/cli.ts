import { randomBytes, X509Certificate } from 'node:crypto';
import { counted } from './core/plural.js';
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { readCodeLists, CodeListError } from './code-lists/codelists.js';
import { appendChange, CLI_ACTOR } from './db/change-log.js';
import { exportParticipants, importParticipants, ImportError } from './participants/json-lines.js';
import {
  loadCatalogue,
  OlderReleaseError,
  type Changes,
  type EntryChange,
  type LoadReport,
} from './code-lists/repository.js';
import { comingRemovals, REMOVALS_DEFAULT_DAYS, type ComingRemovals } from './code-lists/removals.js';
import { ConfigError, loadConfig, nationalRegisterOptionsOf, smlOptionsOf } from './config.js';
import { nationalRegisterClient } from './national-register/client.js';
import { registerCheck } from './national-register/register-check.js';
import { reconcileSml, type Difference } from './network/reconcile.js';
import { smlClient, SmlError } from './network/sml-client.js';
import type { Database } from './db/database.js';
import { DataDirectoryInUseError, openDatabaseExclusively, restoreDataDirectory } from './db/data-dir-lock.js';
import { migrate, migrationFiles } from './db/migrate.js';
import { databaseNamed, DatabaseStartError, type DatabaseSettings } from './db/open.js';
import { loadSmpKeys, networkClientCertificate, SmpKeyError } from './smp/keys.js';
import { Role } from './http/auth.js';
import { ApiError } from './core/errors.js';
import { KeyFileError } from './core/private-key-file.js';
import { hashPassword } from './users/password.js';
import { usernameProblem } from './core/username.js';
import { findCredentials, getUser, insertUser, updateUser } from './users/repository.js';

const USAGE = `Usage: registry <command> [arguments]

Works on the configured database: DATABASE_URL (exported), else the embedded database in REGISTRY_DATA_DIR
(./data), which must not be in use by a running server; a command that opens it names it first, on standard error.

Commands:
  create-admin <username>         add an ADMIN; password from REGISTRY_PASSWORD, else generated and printed
  reset-password <username>       set a user's password; from REGISTRY_PASSWORD, else generated and printed
  load-catalogue [--allow-older] <file-or-dir...>
                                  load the official Peppol code lists (processes.xml, document-types.xml,
                                  transport-profiles.xml); loading the same release again changes nothing;
                                  a release older than the loaded one is refused unless --allow-older
  import-participants <file.jsonl> [--service-provider <identifier>] [--all-or-nothing]
                                  add the participants of a JSON lines file in batches that commit as
                                  they go, skipping participants already present (a re-run resumes);
                                  with --all-or-nothing, nothing is stored unless every line is right
  export-participants [file]      write every participant as JSON lines (standard output without a file)
  sml-reconcile [--dry-run]       list what the SML should hold against what it holds (SML_URL, SML_SMP_ID)
                                  and, without --dry-run, register what is missing and delete what is extra;
                                  end the organizations migrating out that another SMP has migrated
  migrate                         apply the migrations of this version that the database lacks, and list them
                                  (a start applies them too; run it once before restarting instances one by one)
  backup <file>                   write the embedded database (REGISTRY_DATA_DIR) into a new file, a gzipped tar
                                  readable by its owner only; the server must be stopped. On PostgreSQL: pg_dump
  restore <file>                  make REGISTRY_DATA_DIR (new or empty) the embedded database of a backup, migrated
                                  to this version
  sml-prepare-certificate         announce the next SMP certificate (REGISTRY_SMP_NEXT_...) to the SML with
                                  the current one (BDMSL's PrepareChangeCertificate); running it again
                                  announces the same; needs no database
  help                            show this text`;

/** A mistake of the operator: its message is all there is to say. */
class UsageError extends Error {}

const OPERATOR_ERRORS = [
  SmlError,
  SmpKeyError,
  KeyFileError,
  UsageError,
  CodeListError,
  ImportError,
  OlderReleaseError,
  DataDirectoryInUseError,
  ApiError,
  ConfigError,
  DatabaseStartError,
];

/** `runAlone`: a command that works without the database, so beside a running server on the embedded one too. */
type Command = { run: (db: Database) => Promise<void> } | { runAlone: () => Promise<void> };

const ALLOW_OLDER = '--allow-older';
const SERVICE_PROVIDER = '--service-provider';
const DRY_RUN = '--dry-run';
const ALL_OR_NOTHING = '--all-or-nothing';

const isOne = (args: string[]): args is [string] => args.length === 1;

/** Each command with the arguments it takes, checked before the database is opened: undefined when they are wrong. */
const COMMANDS: Record<string, (args: string[]) => Command | undefined> = {
  'create-admin': (args) => (isOne(args) ? { run: (db) => createAdmin(db, args[0]) } : undefined),
  'reset-password': (args) => (isOne(args) ? { run: (db) => resetPassword(db, args[0]) } : undefined),
  'load-catalogue': (args) =>
    args.some((arg) => arg !== ALLOW_OLDER) ? { run: (db) => loadCatalogueFiles(db, args) } : undefined,
  'import-participants': (args) => {
    const rest = args.filter((arg) => arg !== ALL_OR_NOTHING);
    const [file, option, serviceProviderId] = rest;
    const takes =
      args.length - rest.length <= 1 && (rest.length === 1 || (rest.length === 3 && option === SERVICE_PROVIDER));
    return takes && file !== undefined
      ? { run: (db) => importFile(db, file, serviceProviderId, args.includes(ALL_OR_NOTHING)) }
      : undefined;
  },
  'export-participants': (args) => (args.length <= 1 ? { run: (db) => exportFile(db, args[0]) } : undefined),
  'sml-reconcile': (args) =>
    args.length === 0 || (args.length === 1 && args[0] === DRY_RUN)
      ? { run: (db) => smlReconcile(db, args) }
      : undefined,
  'sml-prepare-certificate': (args) => (args.length === 0 ? { runAlone: smlPrepareCertificate } : undefined),
  migrate: (args) => (args.length === 0 ? { runAlone: migrateDatabase } : undefined),
  backup: (args) => (isOne(args) ? { runAlone: () => backup(args[0]) } : undefined),
  restore: (args) => (isOne(args) ? { runAlone: () => restore(args[0]) } : undefined),
};

async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    console.log(USAGE);
    return;
  }
  const withArguments = COMMANDS[name];
  if (!withArguments) throw new UsageError(`Unknown command '${name}'.\n\n${USAGE}`);
  const command = withArguments(args);
  if (!command) throw new UsageError(`Wrong arguments for ${name}.\n\n${USAGE}`);
  if ('runAlone' in command) return command.runAlone();
  await withDatabase(command.run);
}

/** Runs `work` on the configured database, opened for this process alone (and migrated, unless `migrated` is false). */
async function withDatabase(work: (db: Database) => Promise<void>, { migrated = true } = {}): Promise<void> {
  const config = loadConfig();
  tellDatabase(config);
  const db = await openDatabaseExclusively(config, HOLDER, { onWait: waitingForDatabase, migrate: migrated });
  try {
    await work(db);
  } finally {
    await db.close();
  }
}

const HOLDER = 'the registry command line';

/**
 * The first line of every command that opens a database, on standard error (standard output stays the command's
 * answer): which one it works on, so that a DATABASE_URL set but not exported, or a REGISTRY_DATA_DIR mistyped, shows.
 */
const tellDatabase = (settings: DatabaseSettings) => console.error(`Using ${databaseNamed(settings)}`);

const waitingForDatabase = (reason: string, remaining: number) =>
  console.error(
    `the database does not answer yet (${reason}); waiting for it up to ${remaining} s more (DATABASE_WAIT_SECONDS)`,
  );

/** What an error says; undefined when what was thrown has no message. */
function messageOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined;
}

/** The password of REGISTRY_PASSWORD for this user, or a generated one that is printed. */
async function chosenPassword(username: string): Promise<{ password: string; generated: boolean }> {
  const given = process.env.REGISTRY_PASSWORD;
  if (given === undefined || given === '') return { password: randomBytes(18).toString('base64url'), generated: true };
  if (given.length < 12) throw new UsageError('REGISTRY_PASSWORD must have at least 12 characters.');
  // Loaded for a given password only: its dictionaries cost every other command a quarter of a second.
  const { passwordProblem } = await import('./users/password-rules.js');
  const problem = passwordProblem(given, username);
  if (problem) throw new UsageError(`REGISTRY_PASSWORD ${problem}.`);
  return { password: given, generated: false };
}

function tellPassword(username: string, choice: { password: string; generated: boolean }): string {
  return choice.generated
    ? `username: ${username}  password: ${choice.password}  (shown once)`
    : `username: ${username}  password from REGISTRY_PASSWORD`;
}

async function createAdmin(db: Database, username: string): Promise<void> {
  const badName = usernameProblem(username);
  if (badName) throw new UsageError(`The username ${badName}.`);
  const choice = await chosenPassword(username);
  await db.transaction((tx) => insertUser(tx, { username, password: choice.password, role: Role.admin }, CLI_ACTOR));
  console.log(`ADMIN created: ${tellPassword(username, choice)}`);
}

async function resetPassword(db: Database, username: string): Promise<void> {
  const choice = await chosenPassword(username);
  await db.transaction(async (tx) => {
    const user = await findCredentials(tx, username);
    if (!user) throw new UsageError(`No user named '${username}'.`);
    const before = await getUser(tx, user.userId);
    await updateUser(tx, user.userId, user, await hashPassword(choice.password));
    await appendChange(tx, CLI_ACTOR, {
      resource: 'user',
      identifier: user.userId,
      operation: 'update',
      before,
      after: { ...(await getUser(tx, user.userId)), passwordChanged: true },
    });
  });
  console.log(`Password changed: ${tellPassword(username, choice)}`);
}

async function loadCatalogueFiles(db: Database, args: string[]): Promise<void> {
  const { catalogue, skipped } = await readCodeLists(args.filter((arg) => arg !== ALLOW_OLDER));
  for (const path of skipped)
    console.log(
      `skipped ${path}: not a processes, document types, transport profiles or participant identifier schemes list`,
    );
  if (catalogue.sources.length === 0) throw new UsageError('No code list found in the given files.');
  printReport(await loadCatalogue(db, catalogue, { allowOlder: args.includes(ALLOW_OLDER), actor: CLI_ACTOR }));
  printComingRemovals(await comingRemovals(db, null, REMOVALS_DEFAULT_DAYS, REMOVALS_PRINTED));
}

/** Removals the load-catalogue report lists one by one; the API lists them all (GET /rest/api/catalogue/removals). */
const REMOVALS_PRINTED = 200;

const shownValue = (value: unknown) =>
  value === null ? 'none' : typeof value === 'string' ? value : JSON.stringify(value);

function printEntry({ list, entry, change, fields, note }: EntryChange): void {
  const changed = fields.map(({ field, before, after }) =>
    change === 'added' ? `${field} ${shownValue(after)}` : `${field} ${shownValue(before)} -> ${shownValue(after)}`,
  );
  console.log(
    `  ${change} ${list} ${entry}${changed.length > 0 ? `: ${changed.join(', ')}` : ''}${note ? ` (${note})` : ''}`,
  );
}

/** Who loses what at the coming removal instants: the authority tells the providers, who tell their participants. */
function printComingRemovals({ counts, removals, total }: ComingRemovals): void {
  if (counts.length === 0) {
    console.log(`No live participant loses a process or document type in the next ${REMOVALS_DEFAULT_DAYS} days.`);
    return;
  }
  console.log(
    `Coming removals in the next ${REMOVALS_DEFAULT_DAYS} days (no longer published from the instant; the participants keep them on their record):`,
  );
  for (const { removedFrom, participants, entries } of counts)
    console.log(`  ${removedFrom}: ${participants} participant(s) lose ${entries} entr${entries === 1 ? 'y' : 'ies'}`);
  for (const { removedFrom, participant, serviceProvider, process, documentType } of removals) {
    const what = documentType
      ? `document type ${documentType.qualifiedIdentifier} of process ${process.qualifiedIdentifier}`
      : `process ${process.qualifiedIdentifier}`;
    console.log(`  ${removedFrom} ${participant.qualifiedIdentifier} (${serviceProvider.title}) loses ${what}`);
  }
  if (total > removals.length)
    console.log(`  ... and ${total - removals.length} more: GET /rest/api/catalogue/removals lists them`);
}

function printReport(report: LoadReport): void {
  const line = (what: string, changes: Changes) =>
    `  ${what.padEnd(19)} ${changes.added} added, ${changes.updated} updated, ${changes.unchanged} unchanged`;
  console.log(`Loaded ${report.sources.map((source) => `${source.list} ${source.version}`).join(', ')}:`);
  console.log(line('processes', report.processes));
  console.log(line('document types', report.documentTypes));
  console.log(line('transport profiles', report.transportProfiles));
  console.log(`  ${'links'.padEnd(19)} ${report.links.added} added, ${report.links.removed} removed`);
  console.log(line('identifier schemes', report.identifierSchemes));
  for (const change of report.schemeChanges) console.log(`    ICD ${change}`);
  for (const entry of report.entries) printEntry(entry);
  for (const warning of report.warnings) console.log(`  warning: ${warning}`);
}

/** What a repair came to, as the report says it. */
const OUTCOMES: Record<NonNullable<Difference['outcome']>, string> = {
  registered: 'registered',
  held_elsewhere: 'held by another SMP',
  refused: 'refused',
  deleted: 'deleted',
  failed: 'not answered; run again',
};
const reported = ({ participant, outcome, message }: Difference) =>
  `${participant}${outcome ? ` (${OUTCOMES[outcome]}${message && outcome !== 'registered' && outcome !== 'deleted' ? `: ${message}` : ''})` : ''}`;

async function smlReconcile(db: Database, args: string[]): Promise<void> {
  const config = loadConfig();
  const options = smlOptionsOf(config);
  if (!options) throw new UsageError('No SML configured: set SML_URL and SML_SMP_ID.');
  // As the server builds it: the SMP's pair in use (the next one from its instant) unless SML_CLIENT_* name another.
  const keys = await loadSmpKeys(config, { info: () => {}, warn: (line) => console.error(line) });
  const result = await reconcileSml(db, smlClient({ ...networkClientCertificate(keys), ...options }), {
    dryRun: args.includes(DRY_RUN),
  });
  console.log(`SML ${options.url}, SMP ${options.smpId}: should hold ${result.expected}, holds ${result.held}`);
  for (const difference of result.missing) console.log(`  missing: ${reported(difference)}`);
  for (const difference of result.extra) console.log(`  extra:   ${reported(difference)}`);
  for (const participant of result.migrated)
    console.log(`  migrated to another SMP: ${participant}${result.repaired ? ' (ended)' : ''}`);
  if (result.missing.length + result.extra.length + result.migrated.length === 0) console.log('  in step');
}

async function smlPrepareCertificate(): Promise<void> {
  const config = loadConfig();
  const options = smlOptionsOf(config);
  if (!options) throw new UsageError('No SML configured: set SML_URL and SML_SMP_ID.');
  const noNext =
    'No next SMP certificate: set REGISTRY_SMP_NEXT_KEY_FILE, REGISTRY_SMP_NEXT_CERTIFICATE_FILE and REGISTRY_SMP_NEXT_CERTIFICATE_FROM.';
  // Checked first: without a next pair, loading the keys could make a development key in the data directory.
  if (config.REGISTRY_SMP_NEXT_CERTIFICATE_FROM === undefined) throw new UsageError(noNext);
  const keys = await loadSmpKeys(config, { info: () => {}, warn: (line) => console.error(line) });
  const next = keys?.next;
  if (!next) throw new UsageError(noNext);
  const instant = new Date(next.from).toISOString();
  if (Date.now() >= next.from)
    throw new UsageError(
      `The rollover at ${instant} has come: the SML takes an announcement before it, made with the current certificate.`,
    );
  // Made with the current pair, which the SML knows this SMP by.
  await smlClient({ ...options, clientCertificate: () => keys.clientCertificate() }).prepareChangeCertificate(
    next.key.certificatePem,
    new Date(next.from),
  );
  const certificate = new X509Certificate(next.key.certificatePem);
  console.log(
    `SML ${options.url}, SMP ${options.smpId}: announced the certificate ${certificate.subject.replace(/\n/g, ', ')} ` +
      `(serial ${certificate.serialNumber}) from ${instant.slice(0, 10)}; this registry switches to it at ${instant}`,
  );
}

function migrateDatabase(): Promise<void> {
  return withDatabase(
    async (db) => {
      const applied = await migrate(db);
      console.log(
        applied.length > 0
          ? `Applied ${counted(applied.length, 'migration')}: ${applied.join(', ')}.`
          : `Nothing to apply: the database has every migration of this version (the last: ${(await migrationFiles()).at(-1)}).`,
      );
    },
    { migrated: false },
  );
}

const ON_POSTGRES = 'On PostgreSQL, use pg_dump and pg_restore: see docs/operations.md, "Backup and restore".';

/** The embedded database only: the configuration is checked before the database is opened. */
function embeddedOnly(command: string) {
  const config = loadConfig();
  if (config.DATABASE_URL)
    throw new UsageError(`${command} is for the embedded database, and DATABASE_URL is set. ${ON_POSTGRES}`);
  return config;
}

async function backup(file: string): Promise<void> {
  const config = embeddedOnly('backup');
  await withDatabase(async (db) => {
    if (!db.dump) throw new UsageError(`backup is for the embedded database. ${ON_POSTGRES}`);
    const archive = Buffer.from(await (await db.dump()).arrayBuffer());
    await writeFile(file, archive, { flag: 'wx', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(
        error.code === 'EEXIST' ? `${file} exists already; name a new file.` : `Cannot write ${file}: ${error.message}`,
      );
    });
    console.log(
      `Backed up the embedded database in ${resolve(config.REGISTRY_DATA_DIR)} to ${file} (${(archive.length / 1024 / 1024).toFixed(1)} MiB).`,
    );
  });
}

async function restore(file: string): Promise<void> {
  const config = embeddedOnly('restore');
  tellDatabase(config);
  const archive = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read ${file}: ${error.code ?? error.message}`);
  });
  await restoreDataDirectory(config, new Blob([archive]), HOLDER);
  console.log(
    `Restored ${file} into ${resolve(config.REGISTRY_DATA_DIR)}: start the registry with REGISTRY_DATA_DIR=${config.REGISTRY_DATA_DIR}.`,
  );
}

async function importFile(
  db: Database,
  file: string,
  serviceProviderId: string | undefined,
  allOrNothing: boolean,
): Promise<void> {
  const config = loadConfig();
  const register = nationalRegisterOptionsOf(config);
  // Every Norwegian line's organization is asked of the register (a few at a time), as the API asks it.
  const organizationCheck = register && registerCheck(nationalRegisterClient(register), register.recheckAfterSeconds);
  const valueChecks = config.IDENTIFIER_VALUE_CHECKS ? 'refuse' : 'record';
  const { imported, present } = await importParticipants(db, file, {
    serviceProviderId,
    allOrNothing,
    valueChecks,
    progress: process.stderr,
    organizationCheck,
  });
  console.log(
    `Imported ${counted(imported, 'participant')}.${present > 0 ? ` ${present} ${present === 1 ? 'was' : 'were'} present already and skipped.` : ''}`,
  );
}

async function exportFile(db: Database, file: string | undefined): Promise<void> {
  if (file === undefined) {
    await exportParticipants(db, process.stdout, { end: false }).catch(unlessReaderClosed);
    return;
  }
  const out = createWriteStream(file, { flags: 'wx' });
  await new Promise((resolve, reject) => out.once('open', resolve).once('error', reject)).catch(
    (error: NodeJS.ErrnoException) => {
      throw new UsageError(
        error.code === 'EEXIST' ? `${file} exists already; name a new file.` : `Cannot write ${file}: ${error.message}`,
      );
    },
  );
  const count = await exportParticipants(db, out);
  console.log(`Exported ${counted(count, 'participant')} to ${file}.`);
}

/**
 * A reader that stops early (`registry export-participants | head -2`) closes the pipe: the command ends
 * quietly with exit code 0, as Unix tools do, and stops reading the database.
 */
function unlessReaderClosed(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}
// Output still buffered when the reader left fails after the command is done; that is the same quiet end.
process.stdout.on('error', unlessReaderClosed);

/** Expected failures end with their message and exit code 1; nothing prints a stack trace. */
main(process.argv.slice(2)).catch((error: unknown) => {
  const expected = OPERATOR_ERRORS.some((kind) => error instanceof kind);
  console.error(expected ? messageOf(error) : `registry: ${messageOf(error) ?? String(error)}`);
  process.exitCode = expected ? 1 : 2;
});
