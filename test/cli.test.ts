import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoSet } from '../src/setup/demo.js';
import type { Database } from '../src/db/database.js';
import { openDatabaseExclusively } from '../src/db/data-dir-lock.js';
import { verifyPassword } from '../src/users/password.js';
import { findCredentials } from '../src/users/repository.js';
import { getParticipant } from '../src/participants/repository.js';
import { CODE_LISTS } from './helpers/code-lists.js';
import { migratedDataDirectory, testDatabaseKind } from './helpers/database.js';
import { organizationNumberFor } from './helpers/organization-numbers.js';
import { freshDatabaseUrl, runCli, runCommandHere, startServer } from './helpers/entry-point.js';
import { PROJECT_ROOT } from './helpers/openapi-tools.js';

const SLOW = 300_000;
const BILLING = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';

let dir: string;
let env: Record<string, string>;
let dropDatabase: (() => Promise<void>) | undefined;

/** The registry's database, opened the way the command line opens it, for checks between commands. */
async function withDb<T>(work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabaseExclusively(
    { DATABASE_URL: env.DATABASE_URL, REGISTRY_DATA_DIR: env.REGISTRY_DATA_DIR ?? dir },
    'the test',
  );
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

async function passwordWorks(username: string, password: string): Promise<boolean> {
  const user = await withDb((db) => findCredentials(db, username));
  return user !== undefined && verifyPassword(password, user.passwordHash);
}

const ALL_OR_NOTHING = '--all-or-nothing';

/** How many participants the command line has created, by the change log. */
const participantCreations = () =>
  withDb(async (db) =>
    Number(
      (
        await db.query<{ count: string }>(
          "SELECT count(*) AS count FROM change_log WHERE resource = 'participant' AND operation = 'create' AND origin = 'cli'",
        )
      )[0]?.count,
    ),
  );

/**
 * The commands run in this process (`runCommandHere`: the function `dist/cli.js` runs), most of them: a process each
 * cost a Node.js start, a module load and PGlite's WebAssembly compile (some 3 to 7 s apiece on a loaded machine). What
 * only a process shows stays a process: `./registry` itself, a reader closing the pipe, `help` and an unknown
 * command's exit status 1.
 */
const lines = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));

function expectRefusal(result: { code: number | null; stdout: string; stderr: string }, message: string | RegExp) {
  expect(result.code, result.stderr).toBe(1);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'registry-cli-'));
  if (testDatabaseKind === 'embedded') {
    // Made migrated: the commands are these tests' concern, the making of a database is cli-backup.test.ts's.
    env = { REGISTRY_DATA_DIR: await migratedDataDirectory(join(dir, 'data')) };
  } else {
    const database = await freshDatabaseUrl();
    env = { DATABASE_URL: database.url };
    dropDatabase = database.drop;
  }
});
afterAll(async () => {
  await dropDatabase?.();
  await rm(dir, { recursive: true, force: true });
});

/** The first line of a command on standard error: the database it works on, never a password. */
const usingLine = () =>
  env.DATABASE_URL
    ? 'Using PostgreSQL at 127.0.0.1:5432/test'
    : `Using the embedded database in ${env.REGISTRY_DATA_DIR}`;

describe('./registry, as an operator runs it', () => {
  it(
    "answers on the project's Node.js whatever node the PATH has, naming its database first, with no npm warning",
    async () => {
      // The machine's PATH without the project's node_modules/.bin (which `npx vitest` put first): `node` there may be older.
      const path = (process.env.PATH ?? '')
        .split(':')
        .filter((entry) => !entry.includes('node_modules'))
        .join(':');
      const withPassword = env.DATABASE_URL
        ? { DATABASE_URL: env.DATABASE_URL.replace('postgres@', 'postgres:not-told-anyone@') }
        : env;
      const { DATABASE_URL: _, REGISTRY_DATA_DIR: __, ...inherited } = process.env;
      const child = spawnSync(join(PROJECT_ROOT, 'registry'), ['export-participants'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...inherited, PATH: path, ...withPassword },
      });
      expect(child.status, child.stderr).toBe(0);
      expect(child.stderr.split('\n')[0]).toBe(usingLine());
      expect(child.stderr).not.toMatch(/npm (warn|WARN)|EBADENGINE/);
      expect(child.stderr).not.toContain('not-told-anyone');
    },
    SLOW,
  );
});

describe('registry create-admin and reset-password', () => {
  it(
    'creates an ADMIN with the password of REGISTRY_PASSWORD, once',
    async () => {
      const created = await runCommandHere(['create-admin', 'operator'], {
        ...env,
        REGISTRY_PASSWORD: 'operator-password-1',
      });
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toContain('ADMIN created: username: operator  password from REGISTRY_PASSWORD');
      expect(await passwordWorks('operator', 'operator-password-1')).toBe(true);

      expectRefusal(
        await runCommandHere(['create-admin', 'OPERATOR'], { ...env, REGISTRY_PASSWORD: 'operator-password-2' }),
        /already exists/,
      );
      expectRefusal(
        await runCommandHere(['create-admin', 'short'], { ...env, REGISTRY_PASSWORD: 'too-short' }),
        /at least 12 characters/,
      );
      expectRefusal(
        await runCommandHere(['create-admin', 'common'], { ...env, REGISTRY_PASSWORD: 'password1234' }),
        'REGISTRY_PASSWORD is one of the commonest passwords; choose another.',
      );
      expectRefusal(
        await runCommandHere(['create-admin', 'opérateur'], { ...env, REGISTRY_PASSWORD: 'operator-password-3' }),
        'The username may have only ASCII letters, digits and . _ @ -.',
      );
    },
    SLOW,
  );

  it(
    'resets a password to a generated one that it prints once',
    async () => {
      const reset = await runCommandHere(['reset-password', 'operator'], env);
      expect(reset.code, reset.stderr).toBe(0);
      const password = reset.stdout.match(/password: (\S+) +\(shown once\)/)?.[1] as string;
      expect(password.length).toBeGreaterThanOrEqual(12);
      expect(await passwordWorks('operator', password)).toBe(true);
      expect(await passwordWorks('operator', 'operator-password-1')).toBe(false);

      expectRefusal(await runCommandHere(['reset-password', 'nobody'], env), "No user named 'nobody'.");
    },
    SLOW,
  );
});

describe('registry load-catalogue', () => {
  it(
    'loads the Peppol code lists of a directory, and the same release again changes nothing',
    async () => {
      const first = await runCommandHere(['load-catalogue', CODE_LISTS], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/processes +109 added, 0 updated, 0 unchanged/);
      expect(first.stdout).toMatch(/document types +321 added/);
      expect(first.stdout).toMatch(/identifier schemes +105 added, 0 updated, 0 unchanged/);
      expect(first.stdout).toContain('ICD 0242 added: OpenPeppol Service Provider Identification Scheme (active)');
      expect(first.stdout).toContain('ICD 0037 added: LY-tunnus (removed, removed on 2024-12-31)');
      // Each entry it added, by field: the XRechnung 2.0 invoice with the list's removal date.
      expect(first.stdout).toMatch(
        /added document-types busdox-docid-qns::\S*xrechnung_2\.0::2\.1: .*removed_from 2026-08-01T00:00:00/,
      );
      expect(first.stdout).toContain('No live participant loses a process or document type in the next 90 days.');
      expect(first.stdout).not.toMatch(/skipped/);

      const again = await runCommandHere(
        ['load-catalogue', join(CODE_LISTS, 'processes.xml'), join(CODE_LISTS, 'document-types.xml')],
        env,
      );
      expect(again.stdout).toMatch(/processes +0 added, 0 updated, 109 unchanged/);
      expect(again.stdout).toMatch(/links +0 added, 0 removed/);
    },
    SLOW,
  );

  it(
    'refuses a file that is no code list, naming it',
    async () => {
      const file = join(dir, 'notes.xml');
      await writeFile(file, '<notes><note>hello</note></notes>');
      expectRefusal(
        await runCommandHere(['load-catalogue', file], env),
        `${file}: not a Peppol processes, document types, transport profiles or participant identifier schemes code list`,
      );
      expectRefusal(
        await runCommandHere(['load-catalogue', join(dir, 'missing')], env),
        /missing: no such file or directory/,
      );
    },
    SLOW,
  );
});

describe('registry export-participants and import-participants', () => {
  let exported: string;

  beforeAll(async () => {
    await withDb(createDemoSet);
    exported = join(dir, 'participants.jsonl');
  }, SLOW);

  it(
    'exports every participant as one JSON line with its processes',
    async () => {
      const result = await runCommandHere(['export-participants', exported], env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Exported 3 participants');
      const participants = lines(await readFile(exported, 'utf8'));
      expect(participants.map((participant) => participant.qualifiedIdentifier).sort()).toEqual([
        'iso6523-actorid-upis::0007:5560000001',
        'iso6523-actorid-upis::0088:7300000000004',
        'iso6523-actorid-upis::0192:910000004',
      ]);
      expect(participants[0].processes).toEqual([{ qualifiedIdentifier: BILLING, title: expect.any(String) }]);
      expect(participants[0].provider.title).toBe('Demo Service Provider One');

      const toStdout = await runCommandHere(['export-participants'], env);
      expect(lines(toStdout.stdout)).toEqual(participants);
      expectRefusal(await runCommandHere(['export-participants', exported], env), /exists already/);
    },
    SLOW,
  );

  it(
    'ends quietly when the reader of its output closes early (`| head`)',
    async () => {
      const result = await runCli(['export-participants'], env, { closeStdout: true });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr.trim().split('\n')).toEqual([usingLine()]);
    },
    SLOW,
  );

  it(
    'imports all lines or none with --all-or-nothing, naming every wrong line',
    async () => {
      const again = await runCommandHere(['import-participants', exported, ALL_OR_NOTHING], env);
      expectRefusal(
        again,
        /Nothing imported: 3 of 3 lines are wrong\.\nline 1: The service provider already has a participant/,
      );

      const creationsBefore = await participantCreations();
      const participants = lines(await readFile(exported, 'utf8'));
      const renamed = participants.map((participant, index) => ({
        ...participant,
        organizationIdentifier: organizationNumberFor(participant.icd, `99${index}`),
      }));
      renamed[1].icd = '1234';
      const file = join(dir, 'new.jsonl');
      await writeFile(file, renamed.map((participant) => JSON.stringify(participant)).join('\n'));
      expectRefusal(
        await runCommandHere(['import-participants', file, ALL_OR_NOTHING], env),
        /Nothing imported: 1 of 3 lines is wrong\.\nline 2: ICD 1234 is not in the Peppol participant identifier schemes code list/,
      );
      renamed[1].icd = participants[1].icd;
      await writeFile(file, [...renamed, renamed[0]].map((participant) => JSON.stringify(participant)).join('\n'));
      expectRefusal(
        await runCommandHere(['import-participants', ALL_OR_NOTHING, file], env),
        new RegExp(
          `Nothing imported: 1 of 4 lines is wrong\\.\nline 4: The service provider already has a participant for iso6523-actorid-upis::\\d{4}:${renamed[0].organizationIdentifier}`,
        ),
      );
      expect(lines((await runCommandHere(['export-participants'], env)).stdout)).toHaveLength(3);
      expect(await participantCreations()).toBe(creationsBefore);

      await writeFile(file, `${renamed.map((participant) => JSON.stringify(participant)).join('\n')}\n`);
      const imported = await runCommandHere(['import-participants', file, ALL_OR_NOTHING], env);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toContain('Imported 3 participants.');
      const all = lines((await runCommandHere(['export-participants'], env)).stdout);
      expect(all).toHaveLength(6);
      expect(
        all.find((participant) => participant.organizationIdentifier === renamed[1].organizationIdentifier).processes,
      ).toEqual(participants[1].processes);
    },
    SLOW,
  );

  it(
    'puts every imported participant with the service provider named on the command line',
    async () => {
      const target = lines(await readFile(exported, 'utf8'))[0].provider.identifier as string;
      const other = await withDb(
        async (db) =>
          (await db.query<{ id: string }>('SELECT id FROM service_providers WHERE id <> $1', [target]))[0]
            ?.id as string,
      );
      const file = join(dir, 'moved.jsonl');
      const participants = lines(await readFile(exported, 'utf8')).map((participant, index) => ({
        ...participant,
        organizationIdentifier: organizationNumberFor(participant.icd, `88${index}`),
      }));
      await writeFile(file, participants.map((participant) => JSON.stringify(participant)).join('\n'));
      const moved = await runCommandHere(['import-participants', file, '--service-provider', other], env);
      expect(moved.code, moved.stderr).toBe(0);
      const all = lines((await runCommandHere(['export-participants'], env)).stdout);
      expect(all.filter((participant) => participant.provider.identifier === other)).toHaveLength(3);
    },
    SLOW,
  );

  it(
    'commits the right lines, names the wrong ones, and skips on a re-run what is present',
    async () => {
      const [first, second] = lines(await readFile(exported, 'utf8'));
      const otherProvider = await withDb(
        async (db) =>
          (
            await db.query<{ id: string }>('SELECT id FROM service_providers WHERE id <> $1', [
              first.provider.identifier,
            ])
          )[0]?.id as string,
      );
      const fresh = { ...first, organizationIdentifier: organizationNumberFor(first.icd, '770') };
      const secondFresh = organizationNumberFor(second.icd, '771');
      const file = join(dir, 'resumable.jsonl');
      await writeFile(
        file,
        [
          fresh,
          { ...second, icd: '1234' },
          { ...second, organizationIdentifier: secondFresh },
          fresh,
          { ...first, provider: { identifier: otherProvider } },
          {
            ...fresh,
            organizationIdentifier: organizationNumberFor(first.icd, '772'),
            processes: [{ identifier: '00000000-0000-4000-8000-000000000000' }],
          },
        ]
          .map((participant) => JSON.stringify(participant))
          .join('\n'),
      );
      const creationsBefore = await participantCreations();

      expectRefusal(
        await runCommandHere(['import-participants', file], env),
        new RegExp(
          [
            'Imported 2 participants \\(1 already present\\); 3 of 6 lines are wrong and were not imported\\.',
            'line 2: ICD 1234 is not in the Peppol participant identifier schemes code list',
            `line 5: Process '${BILLING}' of organization ${first.qualifiedIdentifier} is already served by another service provider`,
            "line 6: no process with identifier '00000000-0000-4000-8000-000000000000'",
          ].join('\n'),
        ),
      );
      const stored = lines((await runCommandHere(['export-participants'], env)).stdout).filter((participant) =>
        participant.organizationIdentifier.startsWith('77'),
      );
      expect(stored.map((participant) => participant.organizationIdentifier).sort()).toEqual(
        [fresh.organizationIdentifier, secondFresh].sort(),
      );
      expect(await participantCreations()).toBe(creationsBefore + 2);
      const [logged] = await withDb((db) =>
        db.query<{ after: unknown; identifier: string }>(
          "SELECT identifier, change_log_state(after) AS after FROM change_log WHERE resource = 'participant' AND identifier LIKE $1",
          [`%:${fresh.organizationIdentifier}`],
        ),
      );
      expect(logged?.after).toEqual(
        JSON.parse(
          JSON.stringify(
            await withDb((db) =>
              getParticipant(
                db,
                {
                  kind: 'identifier',
                  id: stored.find((participant) => participant.organizationIdentifier === fresh.organizationIdentifier)
                    .identifier,
                },
                null,
              ),
            ),
          ),
        ),
      );

      expectRefusal(
        await runCommandHere(['import-participants', file], env),
        /Imported 0 participants \(3 already present\); 3 of 6 lines are wrong/,
      );
      expect(await participantCreations()).toBe(creationsBefore + 2);
    },
    SLOW,
  );
});

describe('registry usage', () => {
  it(
    'explains its commands and refuses unknown ones',
    async () => {
      const help = await runCli([], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('load-catalogue [--allow-older] <file-or-dir...>');
      expectRefusal(await runCli(['drop-everything'], env), /Unknown command 'drop-everything'/);
      expectRefusal(await runCommandHere(['create-admin'], env), /Wrong arguments for create-admin/);
      expectRefusal(
        await runCommandHere(['load-catalogue', '--allow-older'], env),
        /Wrong arguments for load-catalogue/,
      );
      expectRefusal(
        await runCommandHere(['import-participants', 'file.jsonl', '--provider', 'x'], env),
        /Wrong arguments for import-participants/,
      );
      expectRefusal(
        await runCommandHere(['import-participants', join(dir, 'absent.jsonl')], env),
        /absent\.jsonl: no such file, or not readable/,
      );
    },
    SLOW,
  );
});

describe.runIf(testDatabaseKind === 'embedded')('registry while a server holds the embedded database', () => {
  it(
    'refuses with a clear message, and works again once the server stopped',
    async () => {
      const server = await startServer(env);
      try {
        const refused = await runCommandHere(['create-admin', 'second-operator'], env);
        expectRefusal(refused, `is in use by the registry server (pid ${server.pid}`);
        expectRefusal(await runCommandHere(['export-participants'], env), /in use by the registry server/);
      } finally {
        await server.stop();
      }
      const after = await runCommandHere(['create-admin', 'second-operator'], {
        ...env,
        REGISTRY_PASSWORD: 'second-operator-pw',
      });
      expect(after.code, after.stderr).toBe(0);
    },
    SLOW,
  );
});

describe('what the command line changes', () => {
  it(
    "is in the change log as the command line's, with the state after and no password",
    async () => {
      const entries = await withDb((db) =>
        db.query<{ resource: string; operation: string; after: Record<string, unknown> | null }>(
          `SELECT resource, operation, after FROM change_log WHERE origin = 'cli' ORDER BY seq`,
        ),
      );
      const kinds = new Set(entries.map((entry) => `${entry.resource} ${entry.operation}`));
      expect(kinds).toEqual(
        new Set([
          'user create',
          'user update',
          'process create',
          'document-type create',
          'transport-profile create',
          'identifier-scheme create',
          'participant create',
        ]),
      );
      expect(entries.find((entry) => entry.resource === 'user' && entry.operation === 'update')?.after).toMatchObject({
        username: 'operator',
        passwordChanged: true,
      });
      expect(JSON.stringify(entries)).not.toMatch(/password_hash|passwordHash|operator-password/);
    },
    SLOW,
  );

  it(
    'sml-reconcile lists what the SML lacks, then registers it, then finds it in step',
    async () => {
      const { startLocalSml } = await import('../dev/local-sml.js');
      const sml = await startLocalSml();
      try {
        const smlEnv = { ...env, SML_URL: sml.url, SML_SMP_ID: 'cli-smp' };
        const organizations = await withDb(
          async (db) =>
            (
              await db.query<{ count: number }>(
                'SELECT count(DISTINCT (icd, organization_identifier))::int AS count FROM participants',
              )
            )[0]?.count ?? 0,
        );
        expect(organizations).toBeGreaterThan(0);
        const listed = await runCommandHere(['sml-reconcile', '--dry-run'], smlEnv);
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stdout).toContain(`should hold ${organizations}, holds 0`);
        expect(sml.calls.create).toBe(0);
        const repaired = await runCommandHere(['sml-reconcile'], smlEnv);
        expect(repaired.stdout).toContain('(registered)');
        expect(sml.registrations.get('cli-smp')?.size).toBe(organizations);
        expect((await runCommandHere(['sml-reconcile'], smlEnv)).stdout).toContain('in step');
        expectRefusal(await runCommandHere(['sml-reconcile'], env), /No SML configured/);
      } finally {
        await sml.close();
      }
    },
    SLOW,
  );
});
