import { randomBytes, X509Certificate } from 'node:crypto';
import { counted } from './core/plural.js';
import { createWriteStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
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

/** Where a command writes, and the environment it reads its settings from. */
export interface CommandIo {
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** A command's own: a line on each output, its settings, and standard output itself for what streams there. */
interface Io {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  stdout: Writable;
  stderr: Writable;
}

const ALLOW_OLDER = '--allow-older';
const SERVICE_PROVIDER = '--service-provider';
const DRY_RUN = '--dry-run';
const ALL_OR_NOTHING = '--all-or-nothing';

const isOne = (args: string[]): args is [string] => args.length === 1;

/** Each command with the arguments it takes, checked before the database is opened: undefined when they are wrong. */
const COMMANDS: Record<string, (args: string[], io: Io) => Command | undefined> = {
  'create-admin': (args, io) => (isOne(args) ? { run: (db) => createAdmin(db, io, args[0]) } : undefined),
  'reset-password': (args, io) => (isOne(args) ? { run: (db) => resetPassword(db, io, args[0]) } : undefined),
  'load-catalogue': (args, io) =>
    args.some((arg) => arg !== ALLOW_OLDER) ? { run: (db) => loadCatalogueFiles(db, io, args) } : undefined,
  'import-participants': (args, io) => {
    const rest = args.filter((arg) => arg !== ALL_OR_NOTHING);
    const [file, option, serviceProviderId] = rest;
    const takes =
      args.length - rest.length <= 1 && (rest.length === 1 || (rest.length === 3 && option === SERVICE_PROVIDER));
    return takes && file !== undefined
      ? { run: (db) => importFile(db, io, file, serviceProviderId, args.includes(ALL_OR_NOTHING)) }
      : undefined;
  },
  'export-participants': (args, io) => (args.length <= 1 ? { run: (db) => exportFile(db, io, args[0]) } : undefined),
  'sml-reconcile': (args, io) =>
    args.length === 0 || (args.length === 1 && args[0] === DRY_RUN)
      ? { run: (db) => smlReconcile(db, io, args) }
      : undefined,
  'sml-prepare-certificate': (args, io) =>
    args.length === 0 ? { runAlone: () => smlPrepareCertificate(io) } : undefined,
  migrate: (args, io) => (args.length === 0 ? { runAlone: () => migrateDatabase(io) } : undefined),
  backup: (args, io) => (isOne(args) ? { runAlone: () => backup(io, args[0]) } : undefined),
  restore: (args, io) => (isOne(args) ? { runAlone: () => restore(io, args[0]) } : undefined),
};

async function main(argv: string[], io: Io): Promise<void> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    io.out(USAGE);
    return;
  }
  const withArguments = COMMANDS[name];
  if (!withArguments) throw new UsageError(`Unknown command '${name}'.\n\n${USAGE}`);
  const command = withArguments(args, io);
  if (!command) throw new UsageError(`Wrong arguments for ${name}.\n\n${USAGE}`);
  if ('runAlone' in command) return command.runAlone();
  await withDatabase(io, command.run);
}

/** Runs `work` on the configured database, opened for this process alone (and migrated, unless `migrated` is false). */
async function withDatabase(io: Io, work: (db: Database) => Promise<void>, { migrated = true } = {}): Promise<void> {
  const config = loadConfig(io.env);
  tellDatabase(io, config);
  const db = await openDatabaseExclusively(config, HOLDER, {
    onWait: (reason, remaining) => waitingForDatabase(io, reason, remaining),
    migrate: migrated,
  });
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
const tellDatabase = (io: Io, settings: DatabaseSettings) => io.err(`Using ${databaseNamed(settings)}`);

const waitingForDatabase = (io: Io, reason: string, remaining: number) =>
  io.err(
    `the database does not answer yet (${reason}); waiting for it up to ${remaining} s more (DATABASE_WAIT_SECONDS)`,
  );

/** What an error says; undefined when what was thrown has no message. */
function messageOf(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'message' in error ? error.message : undefined;
}

/** The password of REGISTRY_PASSWORD for this user, or a generated one that is printed. */
async function chosenPassword(io: Io, username: string): Promise<{ password: string; generated: boolean }> {
  const given = io.env.REGISTRY_PASSWORD;
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

async function createAdmin(db: Database, io: Io, username: string): Promise<void> {
  const badName = usernameProblem(username);
  if (badName) throw new UsageError(`The username ${badName}.`);
  const choice = await chosenPassword(io, username);
  await db.transaction((tx) => insertUser(tx, { username, password: choice.password, role: Role.admin }, CLI_ACTOR));
  io.out(`ADMIN created: ${tellPassword(username, choice)}`);
}

async function resetPassword(db: Database, io: Io, username: string): Promise<void> {
  const choice = await chosenPassword(io, username);
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
  io.out(`Password changed: ${tellPassword(username, choice)}`);
}

async function loadCatalogueFiles(db: Database, io: Io, args: string[]): Promise<void> {
  const { catalogue, skipped } = await readCodeLists(args.filter((arg) => arg !== ALLOW_OLDER));
  for (const path of skipped)
    io.out(
      `skipped ${path}: not a processes, document types, transport profiles or participant identifier schemes list`,
    );
  if (catalogue.sources.length === 0) throw new UsageError('No code list found in the given files.');
  printReport(io, await loadCatalogue(db, catalogue, { allowOlder: args.includes(ALLOW_OLDER), actor: CLI_ACTOR }));
  printComingRemovals(io, await comingRemovals(db, null, REMOVALS_DEFAULT_DAYS, REMOVALS_PRINTED));
}

/** Removals the load-catalogue report lists one by one; the API lists them all (GET /rest/api/catalogue/removals). */
const REMOVALS_PRINTED = 200;

const shownValue = (value: unknown) =>
  value === null ? 'none' : typeof value === 'string' ? value : JSON.stringify(value);

function printEntry(io: Io, { list, entry, change, fields, note }: EntryChange): void {
  const changed = fields.map(({ field, before, after }) =>
    change === 'added' ? `${field} ${shownValue(after)}` : `${field} ${shownValue(before)} -> ${shownValue(after)}`,
  );
  io.out(
    `  ${change} ${list} ${entry}${changed.length > 0 ? `: ${changed.join(', ')}` : ''}${note ? ` (${note})` : ''}`,
  );
}

/** Who loses what at the coming removal instants: the authority tells the providers, who tell their participants. */
function printComingRemovals(io: Io, { counts, removals, total }: ComingRemovals): void {
  if (counts.length === 0) {
    io.out(`No live participant loses a process or document type in the next ${REMOVALS_DEFAULT_DAYS} days.`);
    return;
  }
  io.out(
    `Coming removals in the next ${REMOVALS_DEFAULT_DAYS} days (no longer published from the instant; the participants keep them on their record):`,
  );
  for (const { removedFrom, participants, entries } of counts)
    io.out(`  ${removedFrom}: ${participants} participant(s) lose ${entries} entr${entries === 1 ? 'y' : 'ies'}`);
  for (const { removedFrom, participant, serviceProvider, process, documentType } of removals) {
    const what = documentType
      ? `document type ${documentType.qualifiedIdentifier} of process ${process.qualifiedIdentifier}`
      : `process ${process.qualifiedIdentifier}`;
    io.out(`  ${removedFrom} ${participant.qualifiedIdentifier} (${serviceProvider.title}) loses ${what}`);
  }
  if (total > removals.length)
    io.out(`  ... and ${total - removals.length} more: GET /rest/api/catalogue/removals lists them`);
}

function printReport(io: Io, report: LoadReport): void {
  const line = (what: string, changes: Changes) =>
    `  ${what.padEnd(19)} ${changes.added} added, ${changes.updated} updated, ${changes.unchanged} unchanged`;
  io.out(`Loaded ${report.sources.map((source) => `${source.list} ${source.version}`).join(', ')}:`);
  io.out(line('processes', report.processes));
  io.out(line('document types', report.documentTypes));
  io.out(line('transport profiles', report.transportProfiles));
  io.out(`  ${'links'.padEnd(19)} ${report.links.added} added, ${report.links.removed} removed`);
  io.out(line('identifier schemes', report.identifierSchemes));
  for (const change of report.schemeChanges) io.out(`    ICD ${change}`);
  for (const entry of report.entries) printEntry(io, entry);
  for (const warning of report.warnings) io.out(`  warning: ${warning}`);
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

async function smlReconcile(db: Database, io: Io, args: string[]): Promise<void> {
  const config = loadConfig(io.env);
  const options = smlOptionsOf(config);
  if (!options) throw new UsageError('No SML configured: set SML_URL and SML_SMP_ID.');
  // As the server builds it: the SMP's pair in use (the next one from its instant) unless SML_CLIENT_* name another.
  const keys = await loadSmpKeys(config, { info: () => {}, warn: (line) => io.err(line) });
  const result = await reconcileSml(db, smlClient({ ...networkClientCertificate(keys), ...options }), {
    dryRun: args.includes(DRY_RUN),
  });
  io.out(`SML ${options.url}, SMP ${options.smpId}: should hold ${result.expected}, holds ${result.held}`);
  for (const difference of result.missing) io.out(`  missing: ${reported(difference)}`);
  for (const difference of result.extra) io.out(`  extra:   ${reported(difference)}`);
  for (const participant of result.migrated)
    io.out(`  migrated to another SMP: ${participant}${result.repaired ? ' (ended)' : ''}`);
  if (result.missing.length + result.extra.length + result.migrated.length === 0) io.out('  in step');
}

async function smlPrepareCertificate(io: Io): Promise<void> {
  const config = loadConfig(io.env);
  const options = smlOptionsOf(config);
  if (!options) throw new UsageError('No SML configured: set SML_URL and SML_SMP_ID.');
  const noNext =
    'No next SMP certificate: set REGISTRY_SMP_NEXT_KEY_FILE, REGISTRY_SMP_NEXT_CERTIFICATE_FILE and REGISTRY_SMP_NEXT_CERTIFICATE_FROM.';
  // Checked first: without a next pair, loading the keys could make a development key in the data directory.
  if (config.REGISTRY_SMP_NEXT_CERTIFICATE_FROM === undefined) throw new UsageError(noNext);
  const keys = await loadSmpKeys(config, { info: () => {}, warn: (line) => io.err(line) });
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
  io.out(
    `SML ${options.url}, SMP ${options.smpId}: announced the certificate ${certificate.subject.replace(/\n/g, ', ')} ` +
      `(serial ${certificate.serialNumber}) from ${instant.slice(0, 10)}; this registry switches to it at ${instant}`,
  );
}

function migrateDatabase(io: Io): Promise<void> {
  return withDatabase(
    io,
    async (db) => {
      const applied = await migrate(db);
      io.out(
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
function embeddedOnly(io: Io, command: string) {
  const config = loadConfig(io.env);
  if (config.DATABASE_URL)
    throw new UsageError(`${command} is for the embedded database, and DATABASE_URL is set. ${ON_POSTGRES}`);
  return config;
}

async function backup(io: Io, file: string): Promise<void> {
  const config = embeddedOnly(io, 'backup');
  await withDatabase(io, async (db) => {
    if (!db.dump) throw new UsageError(`backup is for the embedded database. ${ON_POSTGRES}`);
    const archive = Buffer.from(await (await db.dump()).arrayBuffer());
    await writeFile(file, archive, { flag: 'wx', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(
        error.code === 'EEXIST' ? `${file} exists already; name a new file.` : `Cannot write ${file}: ${error.message}`,
      );
    });
    io.out(
      `Backed up the embedded database in ${resolve(config.REGISTRY_DATA_DIR)} to ${file} (${(archive.length / 1024 / 1024).toFixed(1)} MiB).`,
    );
  });
}

async function restore(io: Io, file: string): Promise<void> {
  const config = embeddedOnly(io, 'restore');
  tellDatabase(io, config);
  const archive = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read ${file}: ${error.code ?? error.message}`);
  });
  await restoreDataDirectory(config, new Blob([archive]), HOLDER);
  io.out(
    `Restored ${file} into ${resolve(config.REGISTRY_DATA_DIR)}: start the registry with REGISTRY_DATA_DIR=${config.REGISTRY_DATA_DIR}.`,
  );
}

async function importFile(
  db: Database,
  io: Io,
  file: string,
  serviceProviderId: string | undefined,
  allOrNothing: boolean,
): Promise<void> {
  const config = loadConfig(io.env);
  const register = nationalRegisterOptionsOf(config);
  // Every Norwegian line's organization is asked of the register (a few at a time), as the API asks it.
  const organizationCheck = register && registerCheck(nationalRegisterClient(register), register.recheckAfterSeconds);
  const valueChecks = config.IDENTIFIER_VALUE_CHECKS ? 'refuse' : 'record';
  const { imported, present } = await importParticipants(db, file, {
    serviceProviderId,
    allOrNothing,
    valueChecks,
    progress: io.stderr,
    organizationCheck,
  });
  io.out(
    `Imported ${counted(imported, 'participant')}.${present > 0 ? ` ${present} ${present === 1 ? 'was' : 'were'} present already and skipped.` : ''}`,
  );
}

async function exportFile(db: Database, io: Io, file: string | undefined): Promise<void> {
  if (file === undefined) {
    await exportParticipants(db, io.stdout, { end: false }).catch(unlessReaderClosed);
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
  io.out(`Exported ${counted(count, 'participant')} to ${file}.`);
}

/**
 * A reader that stops early (`registry export-participants | head -2`) closes the pipe: the command ends
 * quietly with exit code 0, as Unix tools do, and stops reading the database.
 */
export function unlessReaderClosed(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EPIPE') throw error;
}

/**
 * Runs one command (`argv` as after `registry`) and resolves its exit status: 0 when it is done, 1 for what the
 * operator must change (its message on standard error), 2 for a fault of the program. Nothing prints a stack trace.
 * `src/cli.ts` runs it on the process's own streams and environment; the tests run most commands in their own process.
 */
export async function runCommand(argv: string[], { stdout, stderr, env }: CommandIo): Promise<number> {
  const io: Io = {
    out: (line) => void stdout.write(`${line}\n`),
    err: (line) => void stderr.write(`${line}\n`),
    env,
    stdout,
    stderr,
  };
  try {
    await main(argv, io);
    return 0;
  } catch (error) {
    const expected = OPERATOR_ERRORS.some((kind) => error instanceof kind);
    io.err(expected ? String(messageOf(error)) : `registry: ${messageOf(error) ?? String(error)}`);
    return expected ? 1 : 2;
  }
}
