import { afterAll, beforeAll } from 'vitest';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import type { Database } from '../../src/db/database.js';
import { Role } from '../../src/http/auth.js';
import { insertUser } from '../../src/users/repository.js';
import { openSameSchema, openTestDatabase } from './database.js';
import { passwordHashOf, passwordOf, type TestUsername } from './test-users.js';
import { SYSTEM_ACTOR } from '../../src/db/change-log.js';
import { checkResponsesAgainstDescription } from './openapi-responses.js';

export interface TestUser {
  username: string;
  password: string;
  /** The value of an Authorization header for this user. */
  authorization: string;
}

export interface Fixture {
  accessPointProviderId: string;
  accessPointId: string;
  /** The provider of `serviceProvider` and of `otherServiceProvider`. */
  serviceProviderId: string;
  otherServiceProviderId: string;
}

export interface TestApp {
  app: App;
  db: Database;
  fixture: Fixture;
  users: {
    admin: TestUser;
    authority: TestUser;
    serviceProvider: TestUser;
    otherServiceProvider: TestUser;
    accessPointProvider: TestUser;
  };
  close(): Promise<void>;
}

export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

async function user(
  db: Database,
  username: TestUsername,
  role: Role,
  provider: { serviceProviderId?: string; accessPointProviderId?: string } = {},
): Promise<TestUser> {
  const password = passwordOf(username);
  await insertUser(db, { username, password, role, ...provider }, SYSTEM_ACTOR, passwordHashOf(username));
  return { username, password, authorization: basic(username, password) };
}

/**
 * The application on a database of its own (`open`: by default a fresh one), with one user of each role and the
 * providers they act for.
 */
export async function startTestApp(
  options: Omit<AppOptions, 'db'> = {},
  open: () => Promise<Database> = openTestDatabase,
): Promise<TestApp> {
  const db = await open();
  const [app_provider] = await db.query<{ id: string }>(
    `INSERT INTO access_point_providers (title, contact_name, contact_email) VALUES ('Test AP Provider', 'Ann Operator', 'ann@ap.example') RETURNING id`,
  );
  const accessPointProviderId = (app_provider as { id: string }).id;
  const [accessPoint] = await db.query<{ id: string }>(
    `INSERT INTO access_points (title, provider_id) VALUES ('Test Access Point', $1) RETURNING id`,
    [accessPointProviderId],
  );
  const accessPointId = (accessPoint as { id: string }).id;
  const providers = await db.query<{ id: string }>(
    `INSERT INTO service_providers (title, access_point_id) VALUES ('Provider One', $1), ('Provider Two', $1) RETURNING id`,
    [accessPointId],
  );
  const [serviceProviderId, otherServiceProviderId] = providers.map((row) => row.id) as [string, string];
  const users = {
    admin: await user(db, 'admin', Role.admin),
    authority: await user(db, 'authority', Role.registryAuthority),
    serviceProvider: await user(db, 'provider-one', Role.serviceProvider, { serviceProviderId }),
    otherServiceProvider: await user(db, 'provider-two', Role.serviceProvider, {
      serviceProviderId: otherServiceProviderId,
    }),
    accessPointProvider: await user(db, 'ap-provider', Role.accessPointProvider, { accessPointProviderId }),
  };
  const app = await buildApp({ db, ...options });
  checkResponsesAgainstDescription(app);
  await app.ready();
  return {
    app,
    db,
    fixture: { accessPointProviderId, accessPointId, serviceProviderId, otherServiceProviderId },
    users,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/**
 * The set-up of a test file: its own test app, started before its tests and closed after them. The object is
 * usable at once; its properties are read from the started app at the time they are used. With `listen`, the
 * app also listens on a free loopback port, whose address is `base` (for browsers and raw sockets).
 */
export function useTestApp(
  options: { listen?: boolean; app?: Omit<AppOptions, 'db'> } = {},
): TestApp & { readonly base: string } {
  let started: TestApp | undefined;
  let base: string | undefined;
  beforeAll(async () => {
    started = await startTestApp(options.app);
    if (options.listen) base = await started.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => started?.close());
  const current = (): TestApp => {
    if (!started) throw new Error('the test app starts in beforeAll; use it inside a hook or a test');
    return started;
  };
  return {
    get app() {
      return current().app;
    },
    get db() {
      return current().db;
    },
    get fixture() {
      return current().fixture;
    },
    get users() {
      return current().users;
    },
    get base() {
      if (base === undefined) throw new Error('useTestApp({ listen: true }) gives the address');
      return base;
    },
    close: () => current().close(),
  };
}

/** A second instance of the service on the PostgreSQL schema of a test app, as two servers share one database. */
export async function startOtherInstance(t: TestApp, options: Omit<AppOptions, 'db'> = {}) {
  const db = await openSameSchema(t.db);
  const app = await buildApp({ db, ...options });
  await app.ready();
  return {
    app,
    db,
    async close() {
      await app.close();
      await db.close();
    },
  };
}

/** Waits for the application's participants in memory to have loaded (they load in the background once it is ready). */
export async function participantsHeld(app: TestApp['app']): Promise<void> {
  for (let waited = 0; app.heldParticipants.state !== 'ready'; waited += 20) {
    if (waited > 10_000) throw new Error(`the participants in memory are ${app.heldParticipants.state}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
