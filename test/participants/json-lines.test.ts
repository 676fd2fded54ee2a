import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportParticipants, ImportError, importParticipants } from '../../src/participants/json-lines.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectStatus, vendor } from '../helpers/administration.js';
import { addParticipant, PARTICIPANTS, participantForm, uniqueOrganization } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

/** A name with both Unicode line terminators that JSON may carry raw. */
const NAME = 'Nord\u2028Syd\u2029AS';
const RAW_SEPARATOR = /[\u2028\u2029]/;

let t: TestApp;
let organizationIdentifier: string;
let dir: string;
beforeAll(async () => {
  t = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'registry-json-lines-'));
  ({ organizationIdentifier } = await addParticipant(t.app, t.users.serviceProvider, {
    name: NAME,
    contact: { name: NAME },
  }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.close();
});

/** Each line of `path` as Node's readline, which the import uses, reads it. */
async function readLines(path: string): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity }))
    lines.push(line);
  return lines;
}

describe('U+2028 and U+2029 in JSON that is read line by line', () => {
  it('are escaped in the stream of participants', async () => {
    const response = await call(t.app, {
      url: `${PARTICIPANTS}?query=${organizationIdentifier}`,
      user: t.users.serviceProvider,
      headers: { accept: vendor('participants.stream') },
    });
    const body = expectStatus(response, 200);
    expect(response.body).not.toMatch(RAW_SEPARATOR);
    expect(body.map((participant: { name: string }) => participant.name)).toEqual([NAME]);
  });

  it('are escaped in the export, so each participant stays one line for the import', async () => {
    let text = '';
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += chunk.toString();
        done();
      },
    });
    await exportParticipants(t.db, out);
    const path = join(dir, 'export.jsonl');
    await writeFile(path, text);
    const lines = await readLines(path);
    expect(lines.map((line) => JSON.parse(line).organizationIdentifier)).toContain(organizationIdentifier);
    const exported = lines
      .map((line) => JSON.parse(line))
      .find((participant) => participant.organizationIdentifier === organizationIdentifier);
    expect([exported.name, exported.contact.name]).toEqual([NAME, NAME]);
  });
});

describe('import-participants with characters the registry refuses', () => {
  it('refuses each such line with its number and reason, and imports the rest', async () => {
    const organizations = [uniqueOrganization(), uniqueOrganization(), uniqueOrganization(), uniqueOrganization()];
    const path = join(dir, 'refused-characters.jsonl');
    await writeFile(
      path,
      [
        participantForm({ organizationIdentifier: organizations[0] }),
        participantForm({ organizationIdentifier: `${organizations[1]}\u0000` }),
        participantForm({
          organizationIdentifier: organizations[2],
          name: 'Nul\u0000 AS',
          contact: { name: 'Bell\u0007' },
        }),
        participantForm({ organizationIdentifier: organizations[3] }),
      ]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const outcome = await importParticipants(t.db, path, { serviceProviderId: t.fixture.serviceProviderId }).catch(
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(ImportError);
    expect((outcome as ImportError).message.split('\n')).toEqual([
      'Imported 2 participants (0 already present); 2 of 4 lines are wrong and were not imported.',
      'line 2: organizationIdentifier: must not contain U+0000: only printable US-ASCII is allowed here (U+0021 to U+007E: no blank, no control character, no other letter)',
      'line 3: name: must not contain U+0000: XML 1.0 cannot carry it (control characters other than tab, line feed and carriage return, U+FFFE, U+FFFF, unpaired surrogates); ' +
        'contact.name: must not contain U+0007: XML 1.0 cannot carry it (control characters other than tab, line feed and carriage return, U+FFFE, U+FFFF, unpaired surrogates)',
    ]);
    const stored = await t.db.query<{ organization: string }>(
      'SELECT organization_identifier AS organization FROM participants WHERE organization_identifier = ANY($1) ORDER BY 1',
      [organizations],
    );
    expect(stored.map((row) => row.organization)).toEqual([organizations[0], organizations[3]].sort());
  });
});

describe('import-participants in batches stored two at a time', () => {
  it('imports every right line once, skips a repeat in another batch, and names the wrong lines in file order', async () => {
    const organizations = Array.from({ length: 12 }, () => uniqueOrganization());
    const lines = organizations.map((organizationIdentifier) => participantForm({ organizationIdentifier }));
    lines[1] = { ...lines[1], icd: '1234' };
    lines[4] = lines[0] as Record<string, unknown>;
    lines[7] = { ...lines[7], name: 'Nul\u0000 AS' };
    lines[10] = { ...lines[10], processes: [{ identifier: '00000000-0000-4000-8000-000000000000' }] };
    const path = join(dir, 'batches.jsonl');
    await writeFile(path, lines.map((line) => JSON.stringify(line)).join('\n'));
    const creations = () =>
      t.db.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM change_log WHERE resource = 'participant' AND operation = 'create' AND identifier = ANY($1)",
        [organizations.map((organization) => `iso6523-actorid-upis::0192:${organization}`)],
      );

    const outcome = await importParticipants(t.db, path, {
      serviceProviderId: t.fixture.serviceProviderId,
      batchLines: 2,
    }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ImportError);
    const [summary, ...wrong] = (outcome as ImportError).message.split('\n');
    expect(summary).toBe('Imported 8 participants (1 already present); 3 of 12 lines are wrong and were not imported.');
    expect(wrong.map((line) => line.split(':')[0])).toEqual(['line 2', 'line 8', 'line 11']);
    const stored = await t.db.query<{ organization: string }>(
      'SELECT organization_identifier AS organization FROM participants WHERE organization_identifier = ANY($1)',
      [organizations],
    );
    expect(stored.map((row) => row.organization).sort()).toEqual(
      organizations.filter((_, index) => ![1, 4, 7, 10].includes(index)).sort(),
    );
    expect(await creations()).toEqual([{ count: 8 }]);
  });
});
