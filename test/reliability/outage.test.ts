import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/database.js';
import { cleanUpAfterAll } from './harness/clean-up.js';
import { freshStorage, provision, startService, call, type RunningService, type Storage } from './harness/service.js';
import { startTcpProxy, type TcpProxy } from './harness/tcp-proxy.js';
import { Ledger, runWriteLoad, verify } from './harness/write-load.js';

let storage: Storage | undefined;
let service: RunningService | undefined;
let proxy: TcpProxy | undefined;
cleanUpAfterAll(() => ({ service, storage, others: [proxy] }));

async function readiness(running: RunningService): Promise<{ status: number; body: string }> {
  const answer = await call(running.managementUrl, { path: '/health/ready' });
  return { status: answer.status, body: answer.body };
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 15_000) {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(100);
  }
  return Date.now() - started;
}

const LEAKS = /ECONN|127\.0\.0\.1|postgres|Connection terminated|\bat .+:\d+:\d+|SELECT |INSERT |node_modules/i;

// The embedded database lives in the service's own process: it cannot become unreachable on its own.
describe.skipIf(testDatabaseKind === 'embedded')('PostgreSQL outage under load', () => {
  it('turns not ready with clean 503s while the database is cut off, and recovers by itself when it returns', async () => {
    storage = await freshStorage('postgres');
    const direct = new URL(storage.env.DATABASE_URL as string);
    proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432));
    const proxied = new URL(direct);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    service = await startService({ DATABASE_URL: proxied.toString() });
    const actors = await provision(service.url);
    expect((await readiness(service)).status).toBe(200);

    const ledger = new Ledger();
    let stopped = false;
    const load = runWriteLoad(service.url, actors, ledger, 6, () => stopped);
    await sleep(1500);
    const beforeCut = ledger.acknowledged;

    // Capabilities: a catalogue kind the write load does not change (its process writes drop the processes page).
    expect((await call(service.url, { path: '/rest/api/capabilities' })).status).toBe(200);
    proxy.cut();
    const notReadyAfter = await until(
      'readiness 503',
      async () => (await readiness(service as RunningService)).status === 503,
    );
    expect(JSON.parse((await readiness(service)).body)).toEqual({ status: 'DOWN', database: 'DOWN' });
    expect((await call(service.managementUrl, { path: '/health/live' })).status).toBe(200);
    const fromDatabase = await call(service.url, { path: '/rest/api/participants', authorization: actors.admin });
    expect(fromDatabase.status).toBe(503);
    expect(fromDatabase.json()).toMatchObject({
      status: 503,
      error: 'Service Unavailable',
      exception: 'ServiceUnavailableError',
    });
    const fromCatalogueCache = await call(service.url, { path: '/rest/api/capabilities' });
    expect(
      fromCatalogueCache.status,
      'the capabilities page read before the cut is answered from the catalogue cache',
    ).toBe(200);
    await sleep(1500);
    const duringOutage = ledger.serverErrors.length;

    proxy.restore();
    const readyAfter = await until(
      'readiness 200',
      async () => (await readiness(service as RunningService)).status === 200,
    );
    const afterRestore = ledger.acknowledged;
    await until('writes succeeding again', async () => ledger.acknowledged > afterRestore + 5);
    stopped = true;
    await load;

    expect(beforeCut).toBeGreaterThan(0);
    expect(duringOutage).toBeGreaterThan(0);
    const unclean = ledger.serverErrors.filter(
      (error) => !/(: | got )503 /.test(error) || LEAKS.test(error.replace(/^\S+ \S+/, '')),
    );
    expect(unclean, 'only clean 503 bodies while the database is away').toEqual([]);
    expect(await verify(service.url, actors, ledger)).toEqual([]);
    expect(service.child.exitCode).toBeNull();
    console.log(
      `outage (postgres): not ready ${notReadyAfter} ms after the cut, ready again ${readyAfter} ms after restore, ` +
        `${ledger.serverErrors.length} clean 503s, ${ledger.acknowledged} writes answered 2xx all kept, no restart`,
    );
  }, 120_000);
});
