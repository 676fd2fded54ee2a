import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { basic, useTestApp, type TestUser } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { addDocumentType, addProcess, documentTypeForm, processForm } from '../helpers/catalogue.js';
import { addParticipant, participantForm, type Participant } from '../helpers/participants.js';

/**
 * The role matrix of the specification (the project's copy, docs/spec/registry-service.md), read from its summary
 * table: every operation, called by every role, without credentials and with wrong ones. Allowed callers get the
 * operation's success status on a resource of their own; others get 401 (no or wrong credentials) or 403 (a role
 * the operation does not admit).
 */
const SPECIFICATION = new URL('../../docs/spec/registry-service.md', import.meta.url);

interface SpecOperation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  purpose: string;
  roles: string[];
  success: number;
}

function specOperations(): SpecOperation[] {
  const specification = readFileSync(SPECIFICATION, 'utf8');
  const summaryTable = specification.slice(
    specification.indexOf('### Summary table'),
    specification.indexOf('### Rules common to operations'),
  );
  return summaryTable
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => /^(GET|POST|PUT|DELETE)$/.test(cells[1] ?? ''))
    .map((cells) => ({
      method: cells[1] as SpecOperation['method'],
      path: cells[2] as string,
      purpose: cells[3] as string,
      roles: (cells[4] as string).split(',').map((role) => role.trim()),
      success: Number(cells[5]),
    }));
}

const OPERATIONS = specOperations();
type Caller = 'SP' | 'APP' | 'ADM' | 'AUT' | 'ANO' | 'WRONG';
const CALLERS: Caller[] = ['SP', 'APP', 'ADM', 'AUT', 'ANO', 'WRONG'];

const t = useTestApp();

function userOf(caller: Caller): TestUser | undefined {
  return { SP: t.users.serviceProvider, APP: t.users.accessPointProvider, ADM: t.users.admin, AUT: t.users.authority }[
    caller as 'SP'
  ];
}

let wrongCalls = 0;
/**
 * A real username with a wrong password, or an unknown username: each real user at most twice, which stays
 * below the sign-in throttle's free failures, so that the matrix tests roles and not the throttle.
 */
function wrongCredentials(): string {
  const users = Object.values(t.users);
  const user = users[wrongCalls % users.length] as TestUser;
  wrongCalls += 1;
  return wrongCalls <= users.length * 2
    ? basic(user.username, 'a-wrong-password')
    : basic(`unknown-${wrongCalls}`, 'a-wrong-password');
}

/** Fresh resources for one cell, so that a delete or transfer in one cell leaves the next untouched. */
async function resourcesForCell() {
  const process = await addProcess(t.app, t.users.admin);
  const documentType = await addDocumentType(t.app, t.users.admin);
  const participant: Participant = await addParticipant(t.app, t.users.serviceProvider);
  return { process, documentType, participant };
}

async function callCell(operation: SpecOperation, caller: Caller): Promise<LightMyRequestResponse> {
  const { process, documentType, participant } = await resourcesForCell();
  const byUuid = operation.path.includes('{identifier}');
  const resource = operation.path.startsWith('/rest/api/processes')
    ? process.identifier
    : operation.path.startsWith('/rest/api/document-types')
      ? documentType.identifier
      : operation.path.startsWith('/rest/api/accessPoints')
        ? t.fixture.accessPointId
        : byUuid
          ? participant.identifier
          : participant.qualifiedIdentifier;
  const url = operation.path
    .replace(/\{(identifier|qualifiedIdentifier)\}/, encodeURIComponent(resource))
    .replace('{serviceProviderIdentifier}', t.fixture.otherServiceProviderId);
  const headers: Record<string, string> = {};
  const user = userOf(caller);
  if (user) headers.authorization = user.authorization;
  if (caller === 'WRONG') headers.authorization = wrongCredentials();
  if (operation.purpose.includes('array variant'))
    headers.accept = `application/vnd.registry.${operation.path.split('/')[3]}.stream.v1+json`;
  let payload: Record<string, unknown> | undefined;
  if (operation.method === 'POST' || (operation.method === 'PUT' && !url.includes('/transfer/'))) {
    payload = operation.path.startsWith('/rest/api/processes')
      ? processForm()
      : operation.path.startsWith('/rest/api/document-types')
        ? documentTypeForm()
        : operation.method === 'POST'
          ? participantForm()
          : { processes: [], contact: { name: 'Changed Contact' } };
  }
  return t.app.inject({ method: operation.method, url, headers, ...(payload ? { payload } : {}) });
}

function expected(operation: SpecOperation, caller: Caller): number {
  if (caller === 'WRONG') return 401;
  if (operation.roles.includes(caller)) return operation.success;
  return caller === 'ANO' ? 401 : 403;
}

describe('the role matrix of the specification', () => {
  it('has every operation of the summary table', () => {
    expect(OPERATIONS).toHaveLength(25);
    expect(
      OPERATIONS.filter((operation) => operation.roles.includes('ANO')).map(
        (operation) => `${operation.method} ${operation.path}`,
      ),
    ).toContain('GET /rest/api/processes');
  });

  for (const operation of OPERATIONS) {
    it(`${operation.method} ${operation.path} (${operation.purpose}): ${operation.roles.join(', ')}`, async () => {
      const outcomes: string[] = [];
      for (const caller of CALLERS) {
        const response = await callCell(operation, caller);
        const want = expected(operation, caller);
        if (response.statusCode !== want)
          outcomes.push(`${caller}: expected ${want}, got ${response.statusCode} ${response.body.slice(0, 200)}`);
        else if (want >= 400) expectErrorBody(response, want);
      }
      expect(outcomes).toEqual([]);
    });
  }
});

describe('ownership between two providers', () => {
  it("lets no provider see, change, move or delete another's participant, on any participant operation", async () => {
    const process = await addProcess(t.app, t.users.admin);
    const owned = await addParticipant(t.app, t.users.serviceProvider, {
      processes: [{ identifier: process.identifier }],
      name: 'Owned By One AS',
    });
    const other = t.users.otherServiceProvider;
    const qid = encodeURIComponent(owned.qualifiedIdentifier);
    const attempts: Array<[string, string, Record<string, unknown>?]> = [
      ['GET', `/rest/api/participants/${qid}`],
      ['GET', `/rest/api/participants/${owned.identifier}`],
      ['GET', `/rest/api/participants/${qid}/processes`],
      ['GET', `/rest/api/participants/${owned.identifier}/processes`],
      ['PUT', `/rest/api/participants/${qid}`, { processes: [], contact: { name: 'Hijacked' } }],
      ['PUT', `/rest/api/participants/${qid}/transfer/${t.fixture.otherServiceProviderId}`],
      ['DELETE', `/rest/api/participants/${qid}`],
      ['DELETE', `/rest/api/participants/${owned.identifier}`],
    ];
    for (const [method, url, payload] of attempts) {
      const response = await t.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: other.authorization },
        ...(payload ? { payload } : {}),
      });
      const body = expectErrorBody(response, 404);
      if (url.includes(qid))
        expect(body.message, `${method} ${url}`).toBe(`Couldn't find organization for ${owned.qualifiedIdentifier}`);
      else
        expect(body.message, `${method} ${url}`).toMatch(/^Couldn't find organization for |^Unable to find instance/);
      expect(response.body).not.toContain('Owned By One');
    }
    // Searches of the other provider, paged and streamed, do not show it either.
    const search = await t.app.inject({
      url: `/rest/api/participants?query=${owned.organizationIdentifier}`,
      headers: { authorization: other.authorization },
    });
    expect(search.json().totalElements).toBe(0);
    const stream = await t.app.inject({
      url: `/rest/api/participants?query=${owned.organizationIdentifier}`,
      headers: { authorization: other.authorization, accept: 'application/vnd.registry.participants.stream.v1+json' },
    });
    expect(stream.json()).toEqual([]);
    // Taking the same process for the same organization is refused: one process, one provider.
    const clash = await t.app.inject({
      method: 'POST',
      url: '/rest/api/participants',
      headers: { authorization: other.authorization },
      payload: participantForm({
        organizationIdentifier: owned.organizationIdentifier,
        processes: [{ identifier: process.identifier }],
      }),
    });
    expectErrorBody(clash, 409);

    // Nothing changed for the owner.
    const mine = await t.app.inject({
      url: `/rest/api/participants/${qid}`,
      headers: { authorization: t.users.serviceProvider.authorization },
    });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toMatchObject({
      identifier: owned.identifier,
      contact: owned.contact,
      provider: { identifier: t.fixture.serviceProviderId },
    });
  });
});
