import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseKind } from './helpers/database.js';
import { freshDatabaseUrl, startServer, type RunningServer } from './helpers/entry-point.js';

const BILLING = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const SLOW = 180_000;

interface Printed {
  api: string;
  docs: string;
  admin?: { username: string; password: string };
  serviceProvider?: { username: string; password: string };
}

/**
 * What the first start told, read as a newcomer reads it: standard output is not a terminal here (a log shipper
 * would collect it), so the message is in a file only its owner reads, and the log names the file, never a password.
 */
async function printed(server: RunningServer): Promise<Printed> {
  const [, file] = await server.waitFor(/the generated passwords are in (\S+) \(readable by its owner only\)/);
  expect((await stat(file as string)).mode & 0o777).toBe(0o600);
  const output = await readFile(file as string, 'utf8');
  expect(output).toMatch(/=== Registry ready ===/);
  const credentials = (role: string) => {
    const match = output.match(new RegExp(`${role}: +username: (\\S+) +password: (\\S+)`));
    return match ? { username: match[1] as string, password: match[2] as string } : undefined;
  };
  const told = {
    api: output.match(/API: +(\S+)/)?.[1] as string,
    docs: output.match(/API docs: +(\S+)/)?.[1] as string,
    admin: credentials('ADMIN'),
    serviceProvider: credentials('SERVICE_PROVIDER'),
  };
  for (const password of [told.admin?.password, told.serviceProvider?.password]) {
    if (password) expect(server.output()).not.toContain(password);
  }
  return told;
}

function call(url: string, user: { username: string; password: string } | undefined, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (user)
    headers.set('authorization', `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`);
  if (init.body) headers.set('content-type', 'application/json');
  return fetch(url, { ...init, headers });
}

describe.runIf(testDatabaseKind === 'embedded')('npm start on a fresh clone (embedded database)', () => {
  let dataDir: string;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'registry-first-start-'));
  });
  afterAll(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'prints what a newcomer needs, who then adds a participant with the Peppol billing process and finds it',
    async () => {
      server = await startServer({ REGISTRY_DATA_DIR: dataDir });
      const first = await printed(server);
      expect(first.api).toBe(`${server.baseUrl}/rest/api`);
      expect(first.docs).toBe(`${server.baseUrl}/rest/resources/docs`);
      expect(first.admin?.username).toBe('admin');
      expect(first.serviceProvider?.username).toBe('demo-provider');

      const added = await call(`${first.api}/participants`, first.serviceProvider, {
        method: 'POST',
        body: JSON.stringify({
          icd: '0192',
          organizationIdentifier: '921000049',
          name: 'Newcomer Bakery AS',
          processes: [{ qualifiedIdentifier: BILLING }],
          contact: { name: 'Kari Nordmann', email: 'kari@bakery.example' },
        }),
      });
      expect(added.status, await added.clone().text()).toBe(201);

      const found = await call(`${first.api}/participants?query=921000049&processes=true`, first.serviceProvider);
      const page = await found.json();
      expect(page.totalElements).toBe(1);
      expect(page.content[0]).toMatchObject({
        name: 'Newcomer Bakery AS',
        qualifiedIdentifier: 'iso6523-actorid-upis::0192:921000049',
      });
      expect(
        page.content[0].processes.map((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier),
      ).toEqual([BILLING]);

      const demo = await call(`${first.api}/participants?size=50`, first.serviceProvider);
      expect((await demo.json()).totalElements).toBe(4);
      const adminView = await call(`${first.api}/participants?size=50`, first.admin);
      expect(adminView.status).toBe(200);
      expect((await adminView.json()).totalElements).toBe(4);
    },
    SLOW,
  );

  it(
    'keeps its data, prints no password again and makes no second demo set on the next start',
    async () => {
      const before = await printed(server as RunningServer);
      expect(await (server as RunningServer).stop()).toBe(0);
      expect(await readdir(dataDir)).not.toContain('registry.lock');

      server = await startServer({ REGISTRY_DATA_DIR: dataDir });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(server.output()).not.toContain('password');
      const participants = await call(`${server.baseUrl}/rest/api/participants?size=50`, before.serviceProvider);
      expect(participants.status).toBe(200);
      expect((await participants.json()).totalElements).toBe(4);
    },
    SLOW,
  );
});

describe.runIf(testDatabaseKind === 'postgres')('start with DATABASE_URL', () => {
  let database: Awaited<ReturnType<typeof freshDatabaseUrl>>;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    database = await freshDatabaseUrl();
  });
  afterAll(async () => {
    await server?.stop();
    await database.drop();
  });

  it(
    'makes the first ADMIN and the starter catalogue, but no demo set unless asked',
    async () => {
      server = await startServer({ DATABASE_URL: database.url });
      const first = await printed(server);
      expect(first.admin?.username).toBe('admin');
      expect(first.serviceProvider).toBeUndefined();
      const billing = await call(`${first.api}/processes?query=${encodeURIComponent('billing:01:1.0')}`, undefined);
      expect(
        (await billing.json()).content.map((process: { qualifiedIdentifier: string }) => process.qualifiedIdentifier),
      ).toEqual([BILLING]);
      const participants = await call(`${first.api}/participants`, first.admin);
      expect((await participants.json()).totalElements).toBe(0);
      await server.stop();

      server = await startServer({ DATABASE_URL: database.url, REGISTRY_DEMO: 'true' });
      const second = await printed(server);
      expect(second.admin).toBeUndefined();
      expect(second.serviceProvider?.username).toBe('demo-provider');
      const demo = await call(`${second.api}/participants`, second.serviceProvider);
      expect((await demo.json()).totalElements).toBe(3);
    },
    SLOW,
  );
});
