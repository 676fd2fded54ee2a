import { CLI_ACTOR } from '../db/change-log.js';
import { counted, isOrAre } from '../core/plural.js';
import { constants, createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Database, Queryable } from '../db/database.js';
import { ApiError, ValidationError } from '../core/errors.js';
import { escapeLineSeparators } from '../core/json.js';
import { validatorCompiler } from '../http/validators.js';
import { validationErrorOf } from '../http/validation.js';
import { isUuid } from './identifiers.js';
import { ADD_FORM, registerParticipant, registerParticipants, type Registration, type ValueChecks } from './writes.js';
import { streamParticipants } from './repository.js';
import { existingServiceProviders } from './service-provider-lookups.js';
import { AddParticipantForm, type Participant } from './schemas.js';
import type { CheckedOrganization, OrganizationCheck } from './organization-check.js';

/** An import with bad lines: nothing of it was stored. The message lists the lines and what is wrong. */
export class ImportError extends Error {}

const MAX_LISTED_ERRORS = 20;

/**
 * The API's own check of an add-participant body; its `errors` say what is wrong with the last line it refused.
 * Compiled at the first line an import reads, so that an export (and every other command) does not wait for it.
 */
let compiledLineCheck: ReturnType<typeof validatorCompiler> | undefined;
const checkLine = () =>
  (compiledLineCheck ??= validatorCompiler({ schema: AddParticipantForm, httpPart: 'body', method: 'POST', url: '/' }));
const isAddParticipantForm = (line: unknown): line is AddParticipantForm => checkLine()(line) === true;

/**
 * Writes every live participant as one JSON line: the participant as the API shows it, its processes named by
 * qualified identifier (and title), so the file can be imported into another registry with the same catalogue
 * (and read line by line: U+2028 and U+2029 are escaped).
 * A failing `out` (such as a reader that closed the pipe) rejects with its error and stops the reading;
 * `end: false` leaves `out` open (standard output).
 */
export async function exportParticipants(
  db: Database,
  out: Writable,
  options: { end?: boolean } = {},
): Promise<number> {
  let count = 0;
  const rows = streamParticipants(db, { processes: true }, null, 'ORDER BY pa.id');
  const lineOf = (participant: Participant) => {
    const processes = participant.processes?.map(({ qualifiedIdentifier, title }) => ({ qualifiedIdentifier, title }));
    return `${escapeLineSeparators(JSON.stringify({ ...participant, processes }))}\n`;
  };
  async function* lines() {
    for await (const batch of rows) {
      yield batch.map(lineOf).join('');
      count += batch.length;
    }
  }
  await pipeline(lines, out, { end: options.end ?? true });
  return count;
}

export interface ImportOptions {
  /** Puts every participant with this service provider instead of the line's `provider.identifier`. */
  serviceProviderId?: string;
  /** One transaction for the whole file: any wrong line and nothing is stored. Else each batch commits as it goes. */
  allOrNothing?: boolean;
  /** Where progress is written about every second (standard error); none without it. */
  progress?: Writable;
  /** Lines registered at once (BATCH_LINES): smaller in tests, to cross batches with a few lines. */
  batchLines?: number;
  /** The check of each line's organization (the national register), made before its batch is stored. */
  organizationCheck?: OrganizationCheck;
  /** IDENTIFIER_VALUE_CHECKS: `record` stores a line whose organization identifier breaks its scheme's rule; default `refuse`. */
  valueChecks?: ValueChecks;
}

export interface ImportResult {
  imported: number;
  /** Lines whose participant its provider had already (resumable mode): a re-run skips what an earlier run stored. */
  present: number;
}

/** Lines read, registered at once: enough to make each statement count, few enough to keep memory flat. */
const BATCH_LINES = 2000;
/**
 * Batches stored at once, each in its own transaction on its own connection: the database's work on a batch is one
 * backend's, so a second batch keeps the other core busy while the first waits for its commit's flush.
 */
const BATCHES_AT_ONCE = 2;
const PROGRESS_EVERY_MS = 1000;

/** What an import has done so far. */
class Tally {
  read = 0;
  imported = 0;
  present = 0;
  refused = 0;
  readonly listed: string[] = [];
  private readonly started = Date.now();

  add(outcome: BatchOutcome): void {
    this.imported += outcome.imported;
    this.present += outcome.present;
    // The batch's lines refused by their form come before those refused by the database: listed by line number.
    for (const { number, message } of outcome.refused.sort((a, b) => a.number - b.number)) {
      this.refused += 1;
      if (this.listed.length < MAX_LISTED_ERRORS) this.listed.push(`line ${number}: ${message}`);
    }
  }

  errorReport(): string[] {
    const more = this.refused > MAX_LISTED_ERRORS ? [`... and ${this.refused - MAX_LISTED_ERRORS} more`] : [];
    return [...this.listed, ...more];
  }

  toString(): string {
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001);
    return (
      `${counted(this.read, 'line')} read, ${this.imported} imported, ${this.refused} refused, ${this.present} already present, ` +
      `${Math.round(this.read / seconds)} lines/s`
    );
  }
}

/**
 * Adds the participants of a JSON lines file (the export's format, or add-participant forms with a
 * `provider.identifier`) with the API's rules, in batches of set-based statements. Every bad line is reported with
 * its number. Resumable by default: each batch commits, and a participant its provider has already is skipped, so
 * a re-run after a failure picks up where it stopped; `allOrNothing` stores nothing unless every line is right.
 */
export async function importParticipants(
  db: Database,
  path: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  await access(path, constants.R_OK).catch(() => {
    throw new ImportError(`${path}: no such file, or not readable`);
  });
  const tally = new Tally();
  const checks = options.valueChecks ?? 'refuse';
  const progress = options.progress;
  const timer = progress && setInterval(() => progress.write(`import: ${tally.toString()}\n`), PROGRESS_EVERY_MS);
  try {
    const check = options.organizationCheck;
    const batches = checkedBatches(
      batchesOf(path, tally, options.serviceProviderId, options.batchLines ?? BATCH_LINES),
      check,
    );
    if (options.allOrNothing) {
      // One transaction is one connection: its batches are stored one after the other.
      await db.transaction(async (tx) => {
        await storeInOrder(
          batches,
          1,
          (batch) => importBatch(tx, batch, false, check, checks),
          (outcome) => tally.add(outcome),
        );
        if (tally.refused > 0) {
          throw new ImportError(
            [
              `Nothing imported: ${tally.refused} of ${counted(tally.read, 'line')} ${isOrAre(tally.refused)} wrong.`,
              ...tally.errorReport(),
            ].join('\n'),
          );
        }
      });
    } else {
      await storeInOrder(
        batches,
        BATCHES_AT_ONCE,
        (batch) => db.transaction((tx) => importBatch(tx, batch, true, check, checks)),
        (outcome) => tally.add(outcome),
      );
      if (tally.refused > 0) {
        throw new ImportError(
          [
            `Imported ${counted(tally.imported, 'participant')} (${tally.present} already present); ` +
              `${tally.refused} of ${counted(tally.read, 'line')} ${tally.refused === 1 ? 'is wrong and was' : 'are wrong and were'} not imported.`,
            ...tally.errorReport(),
          ].join('\n'),
        );
      }
    }
  } finally {
    clearInterval(timer);
  }
  return { imported: tally.imported, present: tally.present };
}

/**
 * Stores up to `atOnce` batches at a time while the next one is read and checked, and hands each outcome to `done`
 * in the file's order (so that the wrong lines are listed in it). A failure stops the reading; the batches
 * already being stored are waited for before it is thrown.
 */
async function storeInOrder<T>(
  batches: AsyncIterable<Batch>,
  atOnce: number,
  store: (batch: Batch) => Promise<T>,
  done: (outcome: T) => void,
): Promise<void> {
  const storing: Promise<T>[] = [];
  try {
    for await (const batch of batches) {
      if (storing.length >= atOnce) done(await (storing.shift() as Promise<T>));
      const stored = store(batch);
      stored.catch(() => undefined); // awaited in turn below; not unhandled meanwhile
      storing.push(stored);
    }
    while (storing.length > 0) done(await (storing.shift() as Promise<T>));
  } finally {
    await Promise.allSettled(storing);
  }
}

/** A line's registration, and what the organization check found of it (to record once it is stored). */
type Line = Registration & { number: number; checked?: CheckedOrganization };

/** A batch of lines: the registrations of the good ones, and what is wrong with each of the others. */
interface Batch {
  registrations: Line[];
  wrong: Array<{ number: number; message: string }>;
}

/** Organization numbers looked up at once by an import: the national register's bound per client. */
const LOOKUPS_AT_ONCE = 2;
const IMPORT_CLIENT = 'import';

/**
 * The batches with each line's organization checked, outside any transaction: a line the check refuses is wrong, in
 * the API's words. Without a check, the batches as they are.
 */
async function* checkedBatches(
  batches: AsyncGenerator<Batch>,
  check: OrganizationCheck | undefined,
): AsyncGenerator<Batch> {
  if (!check) return yield* batches;
  for await (const batch of batches) {
    const registrations: Line[] = [];
    const wrong = [...batch.wrong];
    let next = 0;
    const lookups = async () => {
      for (let line = batch.registrations[next++]; line; line = batch.registrations[next++]) {
        const organization = {
          icd: line.form.icd,
          organizationIdentifier: line.form.organizationIdentifier.toLowerCase(),
        };
        try {
          registrations.push({ ...line, checked: await check.check(organization, IMPORT_CLIENT, ADD_FORM) });
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          wrong.push({ number: line.number, message: refusalOf(error) });
        }
      }
    };
    await Promise.all(Array.from({ length: LOOKUPS_AT_ONCE }, lookups));
    yield { registrations: registrations.sort((a, b) => a.number - b.number), wrong };
  }
}

/** What storing a batch did: kept apart from the tally until its transaction commits, since a retry runs it again. */
interface BatchOutcome {
  imported: number;
  present: number;
  refused: Array<{ number: number; message: string }>;
}

/** The file's non-blank lines, numbered and checked as they are read, in batches; counts every line read. */
async function* batchesOf(
  path: string,
  tally: Tally,
  serviceProviderId: string | undefined,
  batchLines: number,
): AsyncGenerator<Batch> {
  // Made here, right before it is read: lines a reader emits before anyone iterates it are lost.
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  const empty = (): Batch => ({ registrations: [], wrong: [] });
  let batch = empty();
  let size = 0;
  for await (const text of lines) {
    tally.read += 1;
    if (text.trim() === '') continue;
    try {
      batch.registrations.push({ number: tally.read, ...registrationOf(text, serviceProviderId) });
    } catch (error) {
      if (!(error instanceof ImportError)) throw error;
      batch.wrong.push({ number: tally.read, message: error.message });
    }
    size += 1;
    if (size < batchLines) continue;
    yield batch;
    batch = empty();
    size = 0;
  }
  if (size > 0) yield batch;
}

/**
 * Registers a batch of lines at once; a line the batch cannot settle (see `registerParticipants`) is registered on
 * its own, in a savepoint, for its exact error. `skipPresent`: a participant its provider has already is skipped.
 */
async function importBatch(
  tx: Queryable,
  batch: Batch,
  skipPresent: boolean,
  check: OrganizationCheck | undefined,
  checks: ValueChecks,
): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { imported: 0, present: 0, refused: [...batch.wrong] };
  const known = await existingServiceProviders(
    tx,
    batch.registrations.map((line) => line.serviceProviderId),
  );
  const registrations = batch.registrations.filter((line) => {
    if (known.has(line.serviceProviderId.toLowerCase())) return true;
    outcome.refused.push({
      number: line.number,
      message: `no service provider with identifier '${line.serviceProviderId}'`,
    });
    return false;
  });
  const outcomes = await registerParticipants(tx, CLI_ACTOR, registrations, checks);
  const stored: Line[] = [];
  for (const [index, line] of registrations.entries()) {
    const registered = outcomes[index];
    if (typeof registered === 'object') stored.push(line);
    else if (registered === 'present' && skipPresent) outcome.present += 1;
    else if (await importOneByOne(tx, line, outcome, checks)) stored.push(line);
  }
  outcome.imported += stored.length;
  await check?.record(
    tx,
    CLI_ACTOR,
    stored.flatMap((line) => (line.checked ? [line.checked] : [])),
  );
  return outcome;
}

/** Registers one line in a savepoint; true when it was stored, else its refusal is in `outcome`. */
async function importOneByOne(tx: Queryable, line: Line, outcome: BatchOutcome, checks: ValueChecks): Promise<boolean> {
  await tx.query('SAVEPOINT participant_line');
  try {
    await registerParticipant(tx, CLI_ACTOR, line.serviceProviderId, line.form, undefined, checks);
    await tx.query('RELEASE SAVEPOINT participant_line');
    return true;
  } catch (error) {
    await tx.query('ROLLBACK TO SAVEPOINT participant_line');
    if (!(error instanceof ApiError)) throw error;
    outcome.refused.push({ number: line.number, message: refusalOf(error) });
    return false;
  }
}

/** A refusal of the API in the words of its messages. */
const refusalOf = (error: ApiError) =>
  error instanceof ValidationError ? error.errors.map((entry) => entry.defaultMessage).join('; ') : error.message;

/** The line's form and service provider, checked against the schema; ImportError says what is wrong. */
function registrationOf(text: string, serviceProviderId: string | undefined): Registration {
  let parsed: unknown;
  try {
    parsed = withoutNulls(JSON.parse(text));
  } catch {
    throw new ImportError('not a JSON object');
  }
  if (!isAddParticipantForm(parsed)) {
    // In the API's words: each field and what is wrong with it, as a 400 of POST /participants would list them.
    const { errors } = validationErrorOf(ADD_FORM, checkLine().errors ?? []);
    throw new ImportError(errors.map((error) => `${error.field || 'line'}: ${error.defaultMessage}`).join('; '));
  }
  const providerId = serviceProviderId ?? providerIdentifierOf(parsed);
  if (typeof providerId !== 'string') throw new ImportError('names no service provider (provider.identifier)');
  if (!isUuid(providerId)) throw new ImportError(`no service provider with identifier '${providerId}'`);
  return { serviceProviderId: providerId, form: parsed };
}

/** The line's `provider.identifier` (the export writes each participant's provider), whatever its type; else undefined. */
function providerIdentifierOf(line: object): unknown {
  if (!('provider' in line) || typeof line.provider !== 'object' || line.provider === null) return undefined;
  return 'identifier' in line.provider ? line.provider.identifier : undefined;
}

/**
 * As in API requests, a JSON null counts as an absent property (exports write absent values as null): removed in
 * place from the freshly parsed line, which nothing else holds, rather than copied.
 */
function withoutNulls(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (const item of value) withoutNulls(item);
    return value;
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === null) Reflect.deleteProperty(value, key);
    else withoutNulls(item);
  }
  return value;
}
