import { describe, expect, it, vi } from 'vitest';
import { startLocalSml, type LocalSml } from '../../dev/local-sml.js';
import { testDatabaseKind } from '../helpers/database.js';
import { uniqueOrganization } from '../helpers/participants.js';
import { cleanUpAfterAll } from './harness/clean-up.js';
import {
  call,
  freshStorage,
  provision,
  startService,
  stopService,
  type RunningService,
  type Storage,
} from './harness/service.js';

const SMP_ID = 'reliability-smp';
const PARTICIPANTS = 12;

let storage: Storage | undefined;
let service: RunningService | undefined;
let sml: LocalSml | undefined;
cleanUpAfterAll(() => ({ service, storage, others: [sml] }));

describe(`SML delivery through a SIGKILL on ${testDatabaseKind === 'embedded' ? 'the embedded database' : 'PostgreSQL'}`, () => {
  it('says at start-up that no SML is configured, and delivers after a restart what was committed before a kill', async () => {
    storage = await freshStorage(testDatabaseKind);
    service = await startService(storage.env);
    expect(service.output.some((line) => line.includes('no SML configured'))).toBe(true);
    await stopService(service);

    sml = await startLocalSml();
    const env = { ...storage.env, SML_URL: sml.url, SML_SMP_ID: SMP_ID };
    service = await startService(env);
    const actors = await provision(service.url);
    const provider = actors.providers[0] as { authorization: string };
    // The SML refuses every connection: the registrations are committed, none is delivered.
    sml.fail('refuse');
    const added: string[] = [];
    for (let index = 0; index < PARTICIPANTS; index += 1) {
      const organizationIdentifier = uniqueOrganization();
      const answer = await call(service.url, {
        method: 'POST',
        path: '/rest/api/participants',
        authorization: provider.authorization,
        body: {
          icd: '0192',
          organizationIdentifier,
          name: 'Killed Before Delivery AS',
          processes: [],
          contact: { name: 'Ops' },
        },
      });
      expect(answer.status, answer.body).toBe(201);
      added.push(`iso6523-actorid-upis::0192:${organizationIdentifier}`);
    }
    service.child.kill('SIGKILL');
    expect((await service.exited).signal).toBe('SIGKILL');
    expect(sml.calls.create).toBe(0);

    sml.fail('none');
    service = await startService(env);
    const held = () => sml?.registrations.get(SMP_ID) ?? new Set<string>();
    await vi.waitFor(() => expect(held().size).toBe(PARTICIPANTS), { timeout: 30_000, interval: 100 });
    expect([...held()].sort()).toEqual([...added].sort());
    expect(sml.calls.create).toBe(PARTICIPANTS);
    console.log(
      `SML delivery through SIGKILL (${testDatabaseKind}): ${PARTICIPANTS} committed before the kill, ` +
        `${sml.calls.create} delivered after the restart, ${sml.calls.create - PARTICIPANTS} duplicates, ${PARTICIPANTS - held().size} lost`,
    );
  }, 240_000);
});
