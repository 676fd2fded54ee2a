import { afterAll, beforeAll } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { startLocalDirectory, type LocalDirectory } from '../../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { startTestApp, type TestApp, type TestUser } from './app.js';
import { addProcess } from './catalogue.js';
import { addParticipant, type Participant } from './participants.js';

/** The registry's SMP id at the local SML. */
export const SMP_ID = 'test-smp';

/**
 * Delivery to a local SML and Directory, with timeouts, retries and polling short enough for tests. The call bound
 * is a second: a shorter one was passed by answers slowed by the other test files running at once, and the call
 * sent again was told "already there", a refusal the tests count.
 */
export const deliveryOptions = (sml: LocalSml, directory: LocalDirectory) => ({
  sml: { url: sml.url, smpId: SMP_ID, timeoutMs: 1000 },
  directory: { url: directory.url, timeoutMs: 1000 },
  delivery: { intervalMs: 50, retryMs: { first: 50, max: 200 }, leaseMs: 5000 },
});

export interface DeliveryTestApp {
  sml: LocalSml;
  directory: LocalDirectory;
  /** The test app, with its users; it delivers nothing. */
  t: TestApp;
  /** An instance on the test app's database that delivers to the local SML and Directory. */
  app: App;
  /** The processes of a participant that serves its organization (one process: a say over its registration). */
  served: { processes: Array<{ identifier: string }> };
  /** Another process, for a second provider that serves the same organization (a process has one provider per organization). */
  servedToo: { processes: Array<{ identifier: string }> };
}

/** Adds a participant with a process through `app`: it has its part in its organization's registration. */
export const addServed = (
  app: App,
  user: TestUser,
  served: DeliveryTestApp['served'],
  overrides: Record<string, unknown> = {},
): Promise<Participant> => addParticipant(app, user, { ...served, ...overrides });

/**
 * The set-up of a delivery test file: before its tests, a local SML and Directory, a test app and an instance on
 * its database delivering to them (`prepare` sees that instance before it starts), handed to `use`; after its
 * tests, all closed.
 */
export function useDeliveryTestApp(
  use: (started: DeliveryTestApp) => void,
  prepare: (app: App) => void = () => undefined,
): void {
  let sml: LocalSml | undefined;
  let directory: LocalDirectory | undefined;
  let t: TestApp | undefined;
  let app: App | undefined;
  beforeAll(async () => {
    sml = await startLocalSml();
    directory = await startLocalDirectory();
    t = await startTestApp();
    app = await buildApp({ db: t.db, ...deliveryOptions(sml, directory) });
    prepare(app);
    await app.ready();
    const [one, two] = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    use({
      sml,
      directory,
      t,
      app,
      served: { processes: [{ identifier: one.identifier }] },
      servedToo: { processes: [{ identifier: two.identifier }] },
    });
  });
  afterAll(async () => {
    await app?.close();
    await t?.close();
    await sml?.close();
    await directory?.close();
  });
}
