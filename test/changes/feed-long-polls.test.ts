import { describe, expect, it, vi } from 'vitest';
import { useTestApp } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { feedEnd } from '../helpers/feed.js';
import { addParticipant } from '../helpers/participants.js';
import { unique } from '../helpers/requests.js';

/** The change feed's `wait` polls: a few per user, and one read per change for the polls that ask the same. */
const t = useTestApp();
const api = asAdmin(t);
const DEFAULT_MAX_POLLS = 10;

type Entry = { identifier: string };

const position = async () => (await feedEnd(t.db)).cursor;

/** The feed's reads so far, counted on the application's database. */
function countFeedReads() {
  const query = vi.spyOn(t.app.db, 'query');
  return {
    count: () => query.mock.calls.filter(([sql]) => sql.includes('AS position, within.*')).length,
    restore: () => query.mockRestore(),
  };
}

describe('waiting polls of the change feed', () => {
  it(`a user holds at most ${DEFAULT_MAX_POLLS}: the next is answered 429 at once; the held ones all get the change`, async () => {
    const provider = t.users.serviceProvider;
    const url = `/rest/api/changes?after=${await position()}&wait=30`;
    const reads = countFeedReads();
    const held = Array.from({ length: DEFAULT_MAX_POLLS }, () => api.get(url, provider));
    await vi.waitFor(() => expect(reads.count()).toBe(DEFAULT_MAX_POLLS), { timeout: 10_000 });
    reads.restore();

    const started = Date.now();
    const refused = await api.get(url.replace('wait=30', 'wait=5'), provider);
    const body = expectErrorBody(refused, 429);
    expect(body.message).toMatch(/waiting polls/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(4000);
    // A read without `wait` is not held back.
    expectStatus(await api.get(url.replace('wait=30', 'wait=0'), provider), 200);

    const participant = await addParticipant(t.app, provider);
    for (const response of await Promise.all(held)) {
      expect(expectStatus(response, 200).entries.map((entry: Entry) => entry.identifier)).toEqual([
        participant.qualifiedIdentifier,
      ]);
    }
    const next = await api.get(`/rest/api/changes?after=${await position()}&wait=1`, provider);
    expect(expectStatus(next, 200).entries).toEqual([]);
  });

  it('one read per change answers every poll waiting with the same question, across users of one scope', async () => {
    const url = `/rest/api/changes?after=${await position()}&wait=30&resource=capability`;
    const reads = countFeedReads();
    const polls = [t.users.admin, t.users.authority].flatMap((user) =>
      Array.from({ length: DEFAULT_MAX_POLLS }, () => api.get(url, user)),
    );
    await vi.waitFor(() => expect(reads.count()).toBe(polls.length), { timeout: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));

    const before = reads.count();
    const capability = expectStatus(await api.send('POST', '/rest/api/capabilities', { title: unique('polled') }), 201);
    for (const response of await Promise.all(polls)) {
      expect(expectStatus(response, 200).entries.map((entry: Entry) => entry.identifier)).toEqual([
        capability.identifier,
      ]);
    }
    // One read, or two when a read began before the change was told and so had to be made again.
    expect(reads.count() - before).toBeLessThanOrEqual(2);
    reads.restore();
  });
});
