import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { testDatabaseKind } from '../helpers/database.js';
import { cleanUpAfterAll } from './harness/clean-up.js';
import { Ledger, runWriteLoad, verify } from './harness/write-load.js';
import {
  ADMIN_PASSWORD,
  basic,
  call,
  freshStorage,
  loggedRequestIds,
  provision,
  startService,
  stopService,
  type RunningService,
  type Storage,
} from './harness/service.js';

let storage: Storage | undefined;
let service: RunningService | undefined;
cleanUpAfterAll(() => ({ service, storage }));

/** Failed sign-ins of one username: from the fourth on, each is answered only after a growing delay. */
async function slowRequests(running: RunningService) {
  const wrong = basic(`nobody-${Date.now()}`, 'wrong-password');
  for (let i = 0; i < 4; i += 1)
    expect((await call(running.url, { path: '/rest/api/participants', authorization: wrong })).status).toBe(401);
  const ids = ['slow-1', 'slow-2'];
  const answers = ids.map((requestId) =>
    call(running.url, { path: '/rest/api/participants', authorization: wrong, requestId }),
  );
  while (!ids.every((id) => loggedRequestIds(running, 'incoming request').has(id))) await sleep(10);
  return answers;
}

/** The feed's cursor after everything committed so far: the `next` of the last page read from the start. */
async function feedEnd(running: RunningService, authorization: string): Promise<string> {
  let path = '/rest/api/changes?limit=1000';
  for (;;) {
    const page = (await call(running.url, { path, authorization })).json<{ entries: unknown[]; next: string }>();
    if (page.entries.length === 0) return page.next;
    path = `/rest/api/changes?after=${page.next}&limit=1000`;
  }
}

describe('graceful shutdown', () => {
  it('answers every request in flight at SIGTERM, loses no answered write, and exits 0', async () => {
    storage = await freshStorage(testDatabaseKind);
    service = await startService(storage.env);
    const actors = await provision(service.url);
    const ledger = new Ledger();
    let stopped = false;
    const load = runWriteLoad(service.url, actors, ledger, 8, () => stopped);
    await sleep(1000);
    const slow = await slowRequests(service);
    const acknowledgedBefore = ledger.acknowledged;
    const signalledAt = performance.now();
    service.child.kill('SIGTERM');

    const exit = await service.exited;
    const tookMs = performance.now() - signalledAt;
    stopped = true;
    await load;
    // The slow ones were in flight (held by the sign-in throttle) when the signal came, and still got their answer.
    for (const answer of await Promise.all(slow)) expect(answer.status).toBe(401);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(tookMs).toBeLessThan(10_000);
    expect(service.output.some((line) => line.includes('"msg":"shutting down"'))).toBe(true);
    expect(acknowledgedBefore).toBeGreaterThan(0);

    // Every request the service began was answered; a request that got no answer never reached it.
    const incoming = loggedRequestIds(service, 'incoming request');
    const completed = loggedRequestIds(service, 'request completed');
    expect(
      [...incoming].filter((id) => !completed.has(id)),
      'begun but never answered',
    ).toEqual([]);
    expect(
      ledger.unansweredIds.filter((id) => incoming.has(id)),
      'received but left unanswered',
    ).toEqual([]);
    expect(ledger.serverErrors).toEqual([]);

    service = await startService(storage.env);
    expect(await verify(service.url, actors, ledger)).toEqual([]);
    console.log(
      `graceful shutdown (${testDatabaseKind}): ${ledger.acknowledged} writes answered 2xx all kept, ` +
        `${incoming.size} requests begun and all answered, ${ledger.unanswered} never reached the service, exit after ${Math.round(tookMs)} ms`,
    );
    await stopService(service);
  }, 180_000);

  it("answers the change feed's waiting polls at once with their page at SIGTERM, and exits 0 without waiting out the grace", async () => {
    await storage?.drop();
    storage = await freshStorage(testDatabaseKind);
    service = await startService(storage.env);
    const admin = basic('admin', ADMIN_PASSWORD);
    const end = await feedEnd(service, admin);
    const ids = ['poll-1', 'poll-2', 'poll-3'];
    const polls = ids.map((requestId) =>
      call(service!.url, {
        path: `/rest/api/changes?after=${end}&wait=60`,
        authorization: admin,
        requestId,
        timeoutMs: 70_000,
      }),
    );
    while (!ids.every((id) => loggedRequestIds(service!, 'incoming request').has(id))) await sleep(10);
    // Held: nothing has changed since `end`.
    await sleep(300);
    const signalledAt = performance.now();
    service.child.kill('SIGTERM');
    const answers = await Promise.all(polls);
    const answeredMs = performance.now() - signalledAt;
    const exit = await service.exited;
    const exitedMs = performance.now() - signalledAt;

    // Each with a cursor of its own (sealed anew), at the same place: nothing came after it.
    for (const answer of answers)
      expect([answer.status, answer.json()]).toEqual([
        200,
        { entries: [], next: expect.stringMatching(/^[\w-]{48}$/) },
      ]);
    // Exit 0: the 10 s grace did not run out (it ends in status 1). Typically milliseconds; the bound leaves room for a loaded machine.
    expect(exit).toEqual({ code: 0, signal: null });
    expect(answeredMs).toBeLessThan(5000);
    expect(exitedMs).toBeLessThan(5000);
    // Every line from the shutdown on is a JSON log line: no plain "killed by timeout".
    const shutdown = service.output.slice(service.output.findIndex((line) => line.includes('"msg":"shutting down"')));
    expect(shutdown.filter((line) => !line.startsWith('{'))).toEqual([]);
    console.log(
      `shutdown with ${ids.length} waiting polls (${testDatabaseKind}): answered after ${Math.round(answeredMs)} ms, exited 0 after ${Math.round(exitedMs)} ms`,
    );
  }, 120_000);
});
