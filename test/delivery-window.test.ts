import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDirectory, type LocalDirectory } from '../dev/local-directory.js';
import { startLocalSml, type LocalSml } from '../dev/local-sml.js';
import { directoryClient } from '../src/network/directory-client.js';
import { SmlError, smlClient } from '../src/network/sml-client.js';

const organization = (n: number) => `iso6523-actorid-upis::0192:9${String(n).padStart(8, '0')}`;

describe('the stand-ins answer at a network peer’s pace', () => {
  let sml: LocalSml;
  let directory: LocalDirectory;
  beforeAll(async () => {
    sml = await startLocalSml(0, undefined, { latencyMs: 50, maxInFlight: 3 });
    directory = await startLocalDirectory(0, undefined, { latencyMs: 50, maxInFlight: 2 });
  });
  afterAll(async () => {
    await sml.close();
    await directory.close();
  });

  it('answers each call after its latency, takes at most its bound at once, and says the peak', async () => {
    const client = smlClient({ url: sml.url, smpId: 'pace-smp', timeoutMs: 5000 });
    const started = Date.now();
    await Promise.all(Array.from({ length: 9 }, (_, n) => client.create(organization(n))));
    // Nine calls, three at a time, 50 ms each: three rounds at least.
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(sml.peakInFlight()).toBe(3);
    expect(sml.inFlight()).toBe(0);
    expect(sml.registrations.get('pace-smp')?.size).toBe(9);

    const indexer = directoryClient({ url: directory.url, timeoutMs: 5000 });
    await Promise.all(Array.from({ length: 6 }, (_, n) => indexer.put(organization(n))));
    expect(directory.peakInFlight()).toBe(2);
    expect(directory.indexed.size).toBe(6);
  });

  it('keeps its failure modes under the bound: a call waiting its turn still fails as told', async () => {
    sml.resetPeak();
    sml.limit(1);
    sml.failFor(organization(100), 'fault');
    const client = smlClient({ url: sml.url, smpId: 'pace-smp', timeoutMs: 5000 });
    const answers = await Promise.allSettled([client.create(organization(100)), client.create(organization(101))]);
    expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'fulfilled']);
    expect(sml.peakInFlight()).toBe(1);
    sml.failFor(organization(100), 'none');
    sml.limit(Infinity);
  });
});

describe('the local SML’s CreateList and DeleteList, all or nothing as BDMSL', () => {
  let sml: LocalSml;
  beforeAll(async () => {
    sml = await startLocalSml();
  });
  afterAll(() => sml.close());
  const client = () => smlClient({ url: sml.url, smpId: 'list-smp', timeoutMs: 5000 });
  const other = () => smlClient({ url: sml.url, smpId: 'other-smp', timeoutMs: 5000 });
  const held = () => [...(sml.registrations.get('list-smp') ?? [])].sort();
  const refusalOf = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error as SmlError,
    );

  it('creates and deletes every member of a list in one call', async () => {
    const members = [1, 2, 3].map(organization);
    await client().createList(members);
    expect(held()).toEqual(members);
    expect(sml.calls.createList).toBe(1);
    await client().deleteList(members.slice(0, 2));
    expect(held()).toEqual(members.slice(2));
    expect(sml.calls.deleteList).toBe(1);
    await client().delete(members[2] as string);
  });

  it('refuses a whole CreateList with the fault a single Create gets when one member is held already, and stores none of it', async () => {
    await other().create(organization(12));
    const single = await refusalOf(client().create(organization(12)));
    const list = await refusalOf(client().createList([organization(11), organization(12), organization(13)]));
    expect(list?.fault).toBe('BadRequestFault');
    expect([list?.fault, list?.code]).toEqual([single?.fault, single?.code]);
    expect(list?.message).toMatch(/already exist/);
    expect(held()).toEqual([]);
  });

  it('refuses a whole DeleteList with NotFoundFault when one member is not held, and deletes none of it', async () => {
    await client().createList([organization(21), organization(22)]);
    const list = await refusalOf(client().deleteList([organization(21), organization(23), organization(22)]));
    expect([list?.fault, list?.code]).toEqual(['NotFoundFault', 'ERR-100']);
    expect(held()).toEqual([organization(21), organization(22)]);
  });
});
