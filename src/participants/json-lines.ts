import { CLI_ACTOR } from '../changes/log.js';
import { constants, createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Database, Queryable } from '../db/database.js';
import { ApiError, ValidationError } from '../core/errors.js';
import { validatorCompiler } from '../http/validators.js';
import { isUuid } from './identifiers.js';
import { registerParticipant } from './writes.js';
import { serviceProviderExists, streamParticipants } from './repository.js';
import { AddParticipantForm, type Participant, type ParticipantFilter } from './schemas.js';

/** An import with bad lines: nothing of it was stored. The message lists the lines and what is wrong. */
export class ImportError extends Error {}

const MAX_LISTED_ERRORS = 20;

const validLine = validatorCompiler({ schema: AddParticipantForm, httpPart: 'body', method: 'POST', url: '/' }) as
  ((value: unknown) => boolean) & { errors?: Array<{ instancePath: string; message?: string }> };

/**
 * Writes every live participant as one JSON line: the participant as the API shows it, its processes named by
 * qualified identifier (and title), so the file can be imported into another registry with the same catalogue.
 * A failing `out` (such as a reader that closed the pipe) rejects with its error and stops the reading;
 * `end: false` leaves `out` open (standard output).
 */
export async function exportParticipants(db: Database, out: Writable, options: { end?: boolean } = {}): Promise<number> {
  let count = 0;
  const rows = streamParticipants(db, { processes: true } as ParticipantFilter, null, 'ORDER BY pa.id');
  async function* lines() {
    for await (const participant of rows as AsyncIterable<Participant & { processes: Array<{ qualifiedIdentifier: string; title: string }> }>) {
      const processes = participant.processes.map(({ qualifiedIdentifier, title }) => ({ qualifiedIdentifier, title }));
      yield `${JSON.stringify({ ...participant, processes })}\n`;
      count += 1;
    }
  }
  await pipeline(lines, out, { end: options.end ?? true });
  return count;
}

/**
 * Adds the participants of a JSON lines file (the export's format, or add-participant forms with a
 * `provider.identifier`), all or nothing, with the API's rules. `serviceProviderId` puts them all with one
 * service provider instead. Every bad line is reported with its number.
 */
export async function importParticipants(db: Database, path: string, serviceProviderId?: string): Promise<number> {
  await access(path, constants.R_OK).catch(() => {
    throw new ImportError(`${path}: no such file, or not readable`);
  });
  return db.transaction(async (tx) => {
    // Made here, right before it is read: lines a reader emits before anyone iterates it are lost.
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
    const errors: string[] = [];
    let imported = 0;
    let number = 0;
    for await (const text of lines) {
      number += 1;
      if (text.trim() === '') continue;
      await tx.query('SAVEPOINT participant_line');
      try {
        await importLine(tx, text, serviceProviderId);
        await tx.query('RELEASE SAVEPOINT participant_line');
        imported += 1;
      } catch (error) {
        await tx.query('ROLLBACK TO SAVEPOINT participant_line');
        if (!(error instanceof ApiError || error instanceof ImportError)) throw error;
        errors.push(`line ${number}: ${error.message}`);
      }
    }
    if (errors.length > 0) {
      const more = errors.length > MAX_LISTED_ERRORS ? [`... and ${errors.length - MAX_LISTED_ERRORS} more`] : [];
      throw new ImportError([`Nothing imported: ${errors.length} of ${number} lines are wrong.`,
        ...errors.slice(0, MAX_LISTED_ERRORS), ...more].join('\n'));
    }
    return imported;
  });
}

async function importLine(tx: Queryable, text: string, serviceProviderId: string | undefined): Promise<void> {
  let parsed: unknown;
  try {
    parsed = withoutNulls(JSON.parse(text));
  } catch {
    throw new ImportError('not a JSON object');
  }
  if (!validLine(parsed)) {
    throw new ImportError((validLine.errors ?? []).map((error) => `${error.instancePath || 'line'} ${error.message}`).join('; '));
  }
  const form = parsed as AddParticipantForm & { provider?: { identifier?: unknown } };
  const providerId = serviceProviderId ?? form.provider?.identifier;
  if (typeof providerId !== 'string') throw new ImportError('names no service provider (provider.identifier)');
  if (!isUuid(providerId) || !(await serviceProviderExists(tx, providerId))) {
    throw new ImportError(`no service provider with identifier '${providerId}'`);
  }
  try {
    await registerParticipant(tx, CLI_ACTOR, providerId, form);
  } catch (error) {
    if (error instanceof ValidationError) throw new ImportError(error.errors.map((entry) => entry.defaultMessage).join('; '));
    throw error;
  }
}

/** As in API requests, a JSON null counts as an absent property (exports write absent values as null). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([, child]) => child !== null).map(([key, child]) => [key, withoutNulls(child)]));
}
