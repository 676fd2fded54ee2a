import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startLocalNationalRegister, type LocalNationalRegister } from '../../dev/local-national-register.js';
import { importParticipants, ImportError } from '../../src/participants/json-lines.js';
import { ConfigError, loadConfig, nationalRegisterOptionsOf } from '../../src/config.js';
import { nationalRegisterClient } from '../../src/national-register/client.js';
import { registerCheck } from '../../src/national-register/register-check.js';
import { startOtherInstance, startTestApp, type TestApp, type TestUser } from '../helpers/app.js';
import { migratedDataDirectory, testDatabaseKind } from '../helpers/database.js';
import { freshDatabaseUrl, runCommandHere } from '../helpers/entry-point.js';
import { openDatabaseExclusively } from '../../src/db/data-dir-lock.js';
import { createDemoSet } from '../../src/setup/demo.js';
import { expectSpecifiedValidationError } from '../helpers/assertions.js';
import { PARTICIPANTS, participantForm, byQualified } from '../helpers/participants.js';
import { call } from '../helpers/requests.js';

/** The longest a registration waits for the register in these tests. */
const WAIT_MS = 1000;
const FLAGS = '/rest/api/national-register/flags';

let register: LocalNationalRegister;
// Re-checks every 50 ms, each organization a day after its last answer: only those never answered are re-checked
// unless a test makes one due.
const SETTINGS = () => ({
  url: register.apiUrl,
  waitMs: WAIT_MS,
  recheckPerMinute: 1200,
  recheckAfterSeconds: 86_400,
  recheckRetrySeconds: 0,
});
let t: TestApp;
let dir: string;

beforeAll(async () => {
  register = await startLocalNationalRegister();
  t = await startTestApp({
    nationalRegister: SETTINGS(),
  });
  dir = await mkdtemp(join(tmpdir(), 'registry-national-register-'));
});
afterAll(async () => {
  await t?.close();
  await register?.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  register.fail('none');
  register.delay(0);
});

let sequence = Math.floor(Math.random() * 1_000_000);
/** A nine-digit organization number with a valid mod 11 check digit (weights 3,2,7,6,5,4,3,2), unique to this run. */
function organizationNumber(): string {
  for (;;) {
    sequence += 1;
    const body = `8${String(sequence).padStart(7, '0')}`;
    const sum = [...body].reduce(
      (total, digit, index) => total + Number(digit) * ([3, 2, 7, 6, 5, 4, 3, 2][index] as number),
      0,
    );
    const check = (11 - (sum % 11)) % 11;
    if (check !== 10) return `${body}${check}`;
  }
}

/** A number the register knows, as a main unit. */
function knownNumber(name = 'Testbedrift AS'): string {
  const number = organizationNumber();
  register.units.set(number, { name });
  return number;
}

const add = (user: TestUser, organizationIdentifier: string, overrides: Record<string, unknown> = {}) =>
  call(t.app, {
    method: 'POST',
    url: PARTICIPANTS,
    user,
    payload: participantForm({ organizationIdentifier, ...overrides }),
  });

const flagsOf = async (user: TestUser, query = '') => {
  const response = await call(t.app, { url: `${FLAGS}${query}`, user });
  expect(response.statusCode, response.body).toBe(200);
  return (
    response.json() as {
      content: Array<{ qualifiedIdentifier: string; state: string; deletedOn: string | null; serviceProvider: string }>;
    }
  ).content;
};
const flagOf = async (user: TestUser, number: string) =>
  (await flagsOf(user)).find((flag) => flag.qualifiedIdentifier === `iso6523-actorid-upis::0192:${number}`);

/** Makes the organization due for a re-check now, as a day passing would. */
const dueNow = (number: string) =>
  t.db.query('UPDATE national_register_checks SET due_at = now() WHERE organization_identifier = $1', [number]);

describe('the settings', () => {
  it('are off unless NATIONAL_REGISTER_URL is set, polite by default, and refuse a URL that is not http(s)', () => {
    expect(nationalRegisterOptionsOf(loadConfig({}))).toBeUndefined();
    expect(
      nationalRegisterOptionsOf(loadConfig({ NATIONAL_REGISTER_URL: 'https://data.brreg.no/enhetsregisteret/api' })),
    ).toEqual({
      url: 'https://data.brreg.no/enhetsregisteret/api',
      waitMs: 3000,
      perClient: 2,
      recheckPerMinute: 30,
      recheckAfterSeconds: 86_400,
    });
    expect(() => loadConfig({ NATIONAL_REGISTER_URL: 'data.brreg.no/enhetsregisteret/api' })).toThrow(ConfigError);
    expect(() => loadConfig({ NATIONAL_REGISTER_URL: 'data.brreg.no' })).toThrow(
      /NATIONAL_REGISTER_URL is 'data.brreg.no': it must be an http\(s\) URL/,
    );
  });
});

describe('new Norwegian participants against Enhetsregisteret', () => {
  it('accepts an organization the register knows, as a main unit or a sub-unit, and asks it nothing of other ICDs', async () => {
    const main = knownNumber();
    expect((await add(t.users.serviceProvider, main)).statusCode).toBe(201);
    expect(register.asked).toContain(`enheter/${main}`);
    const sub = organizationNumber();
    register.units.set(sub, { name: 'Testbedrift AS avd. Bergen', subUnit: true });
    expect((await add(t.users.serviceProvider, sub)).statusCode).toBe(201);
    expect(register.asked).toEqual(expect.arrayContaining([`enheter/${sub}`, `underenheter/${sub}`]));
    const asked = register.asked.length;
    expect((await add(t.users.serviceProvider, '7300010000001', { icd: '0088' })).statusCode).toBe(201);
    expect(register.asked.length).toBe(asked);
    expect(await flagOf(t.users.serviceProvider, main)).toBeUndefined();
  });

  it('refuses an organization the register does not know, in the validation body, and stores nothing', async () => {
    const number = organizationNumber();
    const response = await add(t.users.serviceProvider, number);
    expectSpecifiedValidationError(response, PARTICIPANTS, {
      objectName: 'addParticipantFormDTO',
      field: 'organizationIdentifier',
      code: 'NationalRegister',
      rejectedValue: number,
      defaultMessage: `Enhetsregisteret has no organization ${number}`,
    });
    expect(
      (await call(t.app, { url: byQualified(`iso6523-actorid-upis::0192:${number}`), user: t.users.serviceProvider }))
        .statusCode,
    ).toBe(404);
    // Not an organization number by the ICD's rule (eight digits; nine with a wrong check digit): refused in the
    // rule's words, without asking the register.
    const asked = register.asked.length;
    for (const malformed of ['92100004', '921000042']) {
      const refused = await add(t.users.serviceProvider, malformed);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().errors[0]).toMatchObject({
        code: 'IdentifierRule',
        defaultMessage: expect.stringMatching(/^not a Norwegian organization number/),
      });
    }
    expect(register.asked.length).toBe(asked);
  });

  it('refuses an organization the register has deleted (200 with its slettedato) or removed (410)', async () => {
    const deleted = organizationNumber();
    register.units.set(deleted, { name: 'Nedlagt AS', deletedOn: '2024-06-01' });
    const response = await add(t.users.serviceProvider, deleted);
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toMatchObject([
      {
        field: 'organizationIdentifier',
        defaultMessage: `Enhetsregisteret deleted organization ${deleted} on 2024-06-01`,
      },
    ]);
    const removed = organizationNumber();
    register.units.set(removed, { name: 'Fjernet AS', removed: true });
    const gone = await add(t.users.serviceProvider, removed);
    expect(gone.statusCode).toBe(400);
    expect(gone.json().errors[0].defaultMessage).toBe(`Enhetsregisteret deleted organization ${removed}`);
  });

  it('asks the register once for a number registered twice in a short while', async () => {
    const number = knownNumber();
    expect((await add(t.users.serviceProvider, number)).statusCode).toBe(201);
    expect((await add(t.users.otherServiceProvider, number)).statusCode).toBe(201);
    expect(register.asked.filter((path) => path === `enheter/${number}`)).toHaveLength(1);
  });

  it('lets one provider have only a few lookups in flight: more at once get 429 and are not sent to the register', async () => {
    register.delay(400);
    const numbers = [knownNumber(), knownNumber(), knownNumber()];
    const answers = await Promise.all(numbers.map((number) => add(t.users.serviceProvider, number)));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 201, 429]);
    const refused = answers.find((answer) => answer.statusCode === 429);
    expect(refused?.headers['retry-after']).toBe('1');
    expect(refused?.json().message).toMatch(/organization numbers are being looked up in Enhetsregisteret/);
    expect(register.asked.filter((path) => numbers.some((number) => path === `enheter/${number}`))).toHaveLength(2);
  });

  for (const [failure, how] of [
    ['refuse', 'down'],
    ['timeout', 'slow'],
    ['huge', 'answering 12 MB'],
    ['fault', 'failing with 500'],
  ] as const) {
    it(`accepts within the bound, unconfirmed, while the register is ${how}; the re-check confirms it once it answers`, async () => {
      const number = knownNumber();
      register.failFor(number, failure);
      const started = Date.now();
      const response = await add(t.users.serviceProvider, number);
      expect(response.statusCode, response.body).toBe(201);
      expect(Date.now() - started).toBeLessThan(WAIT_MS + 1500);
      expect(await flagOf(t.users.serviceProvider, number)).toMatchObject({ state: 'unconfirmed', deletedOn: null });
      register.failFor(number, 'none');
      await vi.waitFor(async () => expect(await flagOf(t.users.serviceProvider, number)).toBeUndefined(), {
        timeout: 10_000,
        interval: 100,
      });
    });
  }

  it('holds nothing longer than the bound while the register answers slowly for everyone', async () => {
    register.delay(5000);
    const number = knownNumber();
    const started = Date.now();
    expect((await add(t.users.serviceProvider, number)).statusCode).toBe(201);
    expect(Date.now() - started).toBeLessThan(WAIT_MS + 1500);
    expect(await flagOf(t.users.serviceProvider, number)).toMatchObject({ state: 'unconfirmed' });
  });
});

describe('the re-check of existing Norwegian participants', () => {
  it('flags an organization the register has deleted, for its provider and the authority, through the change log, status and metric', async () => {
    const number = knownNumber();
    expect((await add(t.users.serviceProvider, number)).statusCode).toBe(201);
    register.units.set(number, { name: 'Testbedrift AS', deletedOn: '2026-11-30' });
    await dueNow(number);
    await vi.waitFor(
      async () =>
        expect(await flagOf(t.users.serviceProvider, number)).toMatchObject({
          state: 'deleted',
          deletedOn: '2026-11-30',
          serviceProvider: t.fixture.serviceProviderId,
        }),
      { timeout: 10_000, interval: 100 },
    );
    expect(await flagOf(t.users.authority, number)).toMatchObject({ state: 'deleted' });
    expect((await flagsOf(t.users.authority, '?state=deleted')).map((flag) => flag.state)).not.toContain('unconfirmed');
    const audit = await call(t.app, {
      url: `/rest/api/audit?resource=register-flag&identifier=iso6523-actorid-upis::0192:${number}`,
      user: t.users.authority,
    });
    expect(audit.json().content).toMatchObject([
      {
        resource: 'register-flag',
        operation: 'create',
        origin: 'system',
        before: null,
        after: { state: 'deleted', deletedOn: '2026-11-30' },
      },
    ]);
    const status = await call(t.app, { url: '/rest/api/status', user: t.users.authority });
    expect(status.json().nationalRegister).toMatchObject({
      url: register.apiUrl,
      flagged: { deleted: expect.any(Number) },
    });
    expect(status.json().nationalRegister.flagged.deleted).toBeGreaterThanOrEqual(1);
    expect(await t.app.metrics.metrics()).toMatch(/national_register_flagged_organizations\{state="deleted"\} [1-9]/);
    // The participant is kept: the flag is for its provider and the authority to act on.
    expect(
      (await call(t.app, { url: byQualified(`iso6523-actorid-upis::0192:${number}`), user: t.users.serviceProvider }))
        .statusCode,
    ).toBe(200);
  });

  it('shows a provider only the flags of its own participants', async () => {
    const mine = knownNumber();
    const theirs = knownNumber();
    expect((await add(t.users.serviceProvider, mine)).statusCode).toBe(201);
    expect((await add(t.users.otherServiceProvider, theirs)).statusCode).toBe(201);
    for (const number of [mine, theirs]) {
      register.units.delete(number);
      await dueNow(number);
    }
    await vi.waitFor(
      async () => {
        expect(await flagOf(t.users.authority, mine)).toMatchObject({ state: 'unknown' });
        expect(await flagOf(t.users.authority, theirs)).toMatchObject({ state: 'unknown' });
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await flagOf(t.users.serviceProvider, mine)).toMatchObject({ state: 'unknown' });
    expect(await flagOf(t.users.serviceProvider, theirs)).toBeUndefined();
    expect(
      (await flagsOf(t.users.otherServiceProvider)).every(
        (flag) => flag.serviceProvider === t.fixture.otherServiceProviderId,
      ),
    ).toBe(true);
    expect((await call(t.app, { url: FLAGS, user: t.users.accessPointProvider })).statusCode).toBe(403);
  });
});

describe.runIf(testDatabaseKind === 'postgres')('two instances on one PostgreSQL schema', () => {
  it('re-checks each organization once between them: one holds the lease, the other asks nothing', async () => {
    const other = await startOtherInstance(t, { nationalRegister: SETTINGS() });
    try {
      const number = knownNumber();
      expect((await add(t.users.serviceProvider, number)).statusCode).toBe(201);
      register.units.set(number, { name: 'Testbedrift AS', deletedOn: '2026-12-01' });
      await dueNow(number);
      await vi.waitFor(
        async () => expect(await flagOf(t.users.authority, number)).toMatchObject({ state: 'deleted' }),
        { timeout: 10_000, interval: 100 },
      );
      // Both instances step every 50 ms: a second asker would have asked by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(register.asked.filter((path) => path === `enheter/${number}`)).toHaveLength(2);
      const audit = await call(other.app, {
        url: `/rest/api/audit?resource=register-flag&identifier=iso6523-actorid-upis::0192:${number}`,
        user: t.users.authority,
      });
      expect(audit.json().content).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe('the JSON lines import against Enhetsregisteret', () => {
  it('imports the lines whose organization the register knows and refuses the others by line, in plain words', async () => {
    const known = knownNumber();
    const unknown = organizationNumber();
    const path = join(dir, 'import.jsonl');
    await writeFile(
      path,
      [participantForm({ organizationIdentifier: known }), participantForm({ organizationIdentifier: unknown })]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );
    const organizationCheck = registerCheck(nationalRegisterClient({ url: register.apiUrl, waitMs: WAIT_MS }), 86_400);
    const outcome = await importParticipants(t.db, path, {
      serviceProviderId: t.fixture.serviceProviderId,
      organizationCheck,
    }).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ImportError);
    expect((outcome as Error).message).toContain(`line 2: Enhetsregisteret has no organization ${unknown}`);
    expect((outcome as Error).message).toMatch(/^Imported 1 participant /);
    const found = await call(t.app, {
      url: byQualified(`iso6523-actorid-upis::0192:${known}`),
      user: t.users.serviceProvider,
    });
    expect(found.statusCode).toBe(200);
  });
});

describe('registry import-participants with NATIONAL_REGISTER_URL', () => {
  it('refuses the lines whose organization the register does not know, as the API does', async () => {
    const database = testDatabaseKind === 'postgres' ? await freshDatabaseUrl() : undefined;
    const env: Record<string, string> = database
      ? { DATABASE_URL: database.url }
      : { REGISTRY_DATA_DIR: await migratedDataDirectory(join(dir, 'cli-data')) };
    try {
      const db = await openDatabaseExclusively(
        { DATABASE_URL: env.DATABASE_URL, REGISTRY_DATA_DIR: env.REGISTRY_DATA_DIR ?? '' },
        'the test',
      );
      const provider = await createDemoSet(db)
        .then(() => db.query<{ id: string }>('SELECT id FROM service_providers ORDER BY title LIMIT 1'))
        .finally(() => db.close());
      const known = knownNumber();
      const unknown = organizationNumber();
      const path = join(dir, 'cli-import.jsonl');
      await writeFile(
        path,
        [participantForm({ organizationIdentifier: known }), participantForm({ organizationIdentifier: unknown })]
          .map((line) => JSON.stringify(line))
          .join('\n'),
      );
      const result = await runCommandHere(
        ['import-participants', path, '--service-provider', provider[0]?.id as string],
        {
          ...env,
          NATIONAL_REGISTER_URL: register.apiUrl,
        },
      );
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(`line 2: Enhetsregisteret has no organization ${unknown}`);
      expect(register.asked).toEqual(expect.arrayContaining([`enheter/${known}`, `enheter/${unknown}`]));
    } finally {
      await database?.drop();
    }
  }, 120_000);
});
