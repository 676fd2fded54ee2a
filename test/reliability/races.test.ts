import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { useTestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { addProcess } from '../helpers/catalogue.js';
import { participantForm, uniqueOrganization } from '../helpers/participants.js';

/**
 * Adds, updates, transfers and deletes of one organization by two providers, all at once, many times over:
 * never a 5xx, refusals in the common error body, and never two providers serving one process of one
 * organization, nor two participants of one provider for one organization.
 */
const ROUNDS = 25;
const ALLOWED = new Set([200, 201, 204, 404, 409]);

const t = useTestApp();

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

describe('races on one organization', () => {
  it('never leave one process of an organization with two providers, and never answer 5xx', async () => {
    const processes = [await addProcess(t.app, t.users.admin), await addProcess(t.app, t.users.admin)];
    const one = t.users.serviceProvider;
    const two = t.users.otherServiceProvider;
    const statuses = new Map<number, number>();
    for (let round = 0; round < ROUNDS; round += 1) {
      const organizationIdentifier = uniqueOrganization();
      const path = `/rest/api/participants/${encodeURIComponent(`iso6523-actorid-upis::0192:${organizationIdentifier}`)}`;
      const references = () =>
        shuffle(processes.map((process) => ({ identifier: process.identifier }))).slice(
          0,
          1 + Math.floor(Math.random() * 2),
        );
      const request = (user: TestUser, method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
        t.app.inject({ method, url, headers: { authorization: user.authorization }, ...(payload ? { payload } : {}) });
      const add = (user: TestUser) =>
        request(
          user,
          'POST',
          '/rest/api/participants',
          participantForm({ organizationIdentifier, processes: references() }),
        );
      const update = (user: TestUser) =>
        request(user, 'PUT', path, { processes: references(), contact: { name: 'Racing' } });
      const transfer = (from: TestUser, to: string) => request(from, 'PUT', `${path}/transfer/${to}`);
      const remove = (user: TestUser) => request(user, 'DELETE', path);
      const calls: Array<() => Promise<LightMyRequestResponse>> = shuffle([
        () => add(one),
        () => add(two),
        () => add(one),
        () => add(two),
        () => update(one),
        () => update(two),
        () => transfer(one, t.fixture.otherServiceProviderId),
        () => transfer(two, t.fixture.serviceProviderId),
        () => remove(one),
        () => remove(two),
        () => add(one),
      ]);
      const responses = await Promise.all(calls.map((call) => call()));
      for (const response of responses) {
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        expect(ALLOWED.has(response.statusCode), `${response.statusCode} ${response.body}`).toBe(true);
        if (response.statusCode >= 400) expectErrorBody(response, response.statusCode);
      }
      const doubled = await t.db.query(
        `SELECT pp.process_id, count(DISTINCT p.service_provider_id) AS providers
           FROM participant_processes pp JOIN participants p ON p.id = pp.participant_id
          WHERE p.organization_identifier = $1 GROUP BY pp.process_id HAVING count(DISTINCT p.service_provider_id) > 1`,
        [organizationIdentifier],
      );
      expect(doubled, `round ${round}`).toEqual([]);
      const twice = await t.db.query(
        `SELECT service_provider_id FROM participants WHERE organization_identifier = $1 GROUP BY service_provider_id HAVING count(*) > 1`,
        [organizationIdentifier],
      );
      expect(twice, `round ${round}`).toEqual([]);
      const union = await t.app.inject({
        url: `/rest/api/organizations/${encodeURIComponent(`iso6523-actorid-upis::0192:${organizationIdentifier}`)}/processes`,
      });
      if (union.statusCode === 200) {
        const identifiers = union.json<{ identifier: string }[]>().map((process) => process.identifier);
        expect(new Set(identifiers).size).toBe(identifiers.length);
      } else {
        expectErrorBody(union, 404);
      }
    }
    // The races really raced: some requests won and some lost.
    expect(statuses.get(201) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(409) ?? 0).toBeGreaterThan(0);
    console.log(
      `races (${process.env.TEST_DATABASE}): ${ROUNDS} rounds of 11 concurrent writes; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
  }, 120_000);
});
