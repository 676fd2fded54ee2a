import type { Dataset } from './dataset.js';
import type { SmpLookup } from './smp.js';
import {
  icdOf,
  NAME_FRAGMENTS,
  norwegianNumberOf,
  organizationOf,
  PARTICIPANT_SCHEME,
  PROVIDER_COUNT,
  providerIndexOf,
  qualifiedIdentifierOf,
  sqlKeys,
} from './keys.js';

/** One HTTP request of a scenario, as the load generator and the in-process recorder both send it. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** A value a request carries, and how a pgbench script computes the same value from its random variables. */
export interface Binding {
  value: unknown;
  sql: string;
}

/** One draw of random keys: the requests it makes (in order) and the bindings for the recorded SQL. */
export interface Draw {
  requests: BenchRequest[];
  bindings: Binding[];
}

export interface Scenario {
  id: string;
  title: string;
  /** How a transaction of the scenario counts: requests, or added participants (scenario 6). */
  unit: 'requests' | 'adds';
  /** Concurrent clients, when the scenario fixes them (else the run's `--connections`). */
  connections?: number;
  /** The pgbench `\set` lines that draw the variables the bindings use. */
  pgbenchVariables: string[];
  draw(): Draw;
}

const random = (below: number) => Math.floor(Math.random() * below);
const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
const JSON_ACCEPT = { accept: 'application/json' };
const STREAM_ACCEPT = { accept: 'application/vnd.registry.participants.stream.v1+json' };

/** pgbench: a random participant number, as in `\set bench_n random(1, N)`. */
const N = ':bench_n';
/** Picks element `:variable` (1-based) of a literal array: how a script draws one of a known set of values. */
const element = (values: readonly string[], variable: string, type = 'text') =>
  `('{${values.map((value) => `"${value}"`).join(',')}}'::${type}[])[${variable}]`;

function participantBindings(n: number): Binding[] {
  const icd = icdOf(n);
  const organization = organizationOf(n);
  return [
    {
      value: qualifiedIdentifierOf(n),
      sql: `'${PARTICIPANT_SCHEME}::' || ${sqlKeys.icd(N)} || ':' || ${sqlKeys.organization(N)}`,
    },
    { value: `${icd}:${organization}`, sql: `${sqlKeys.icd(N)} || ':' || ${sqlKeys.organization(N)}` },
    { value: icd, sql: sqlKeys.icd(N) },
    { value: organization, sql: sqlKeys.organization(N) },
  ];
}

export function scenarios(data: Dataset): Scenario[] {
  const count = data.participants;
  const providerAuth = data.providers.map((p) => basic(p.username, data.password));
  const authority = basic(data.authority, data.password);
  const providerIds = data.providers.map((p) => p.id);
  const providerBinding = (k: number, variable: string): Binding => ({
    value: providerIds[k],
    sql: element(providerIds, `1 + ${variable}`, 'uuid'),
  });
  const processBinding = (k: number): Binding => ({
    value: data.processIds[k],
    sql: element(data.processIds, ':bench_p', 'uuid'),
  });
  const participantN = `\\set bench_n random(1, ${count})`;
  const processK = `\\set bench_p random(1, ${data.processIds.length})`;
  const getProcess = (withCredentials: boolean): Draw => {
    const k = random(data.processIds.length);
    const auth: Record<string, string> = withCredentials
      ? { authorization: providerAuth[random(PROVIDER_COUNT)] as string }
      : {};
    return {
      requests: [
        { method: 'GET', path: `/rest/api/processes/${data.processIds[k]}`, headers: { ...JSON_ACCEPT, ...auth } },
      ],
      bindings: [processBinding(k)],
    };
  };
  let added = 0;
  const addThenDelete = (id: string, title: string, connections?: number): Scenario => ({
    id,
    title,
    unit: 'adds',
    connections,
    pgbenchVariables: ['\\set bench_a random(1, 999999999)', `\\set bench_k random(0, ${PROVIDER_COUNT - 1})`],
    draw() {
      const organization = norwegianNumberOf((added += 1), 7, 2);
      const k = random(PROVIDER_COUNT);
      const headers = { ...JSON_ACCEPT, authorization: providerAuth[k] as string };
      const qualified = `${PARTICIPANT_SCHEME}::0192:${organization}`;
      const orgSql = `(9000000000 + :bench_a)::text`;
      return {
        requests: [
          {
            method: 'POST',
            path: '/rest/api/participants',
            headers: { ...headers, 'content-type': 'application/json' },
            body: JSON.stringify({
              icd: '0192',
              organizationIdentifier: organization,
              name: `Benchmark Testbedrift ${organization} AS`,
              processes: data.freeProcessIds.map((identifier) => ({ identifier })),
              contact: { name: 'Kari Nordmann', email: 'kari@example.no', phoneNumber: '+47 22 00 00 00' },
            }),
          },
          { method: 'DELETE', path: `/rest/api/participants/${encodeURIComponent(qualified)}`, headers },
        ],
        bindings: [
          { value: qualified, sql: `'${PARTICIPANT_SCHEME}::0192:' || ${orgSql}` },
          { value: `0192:${organization}`, sql: `'0192:' || ${orgSql}` },
          { value: organization, sql: orgSql },
          { value: `Benchmark Testbedrift ${organization} AS`, sql: `'Benchmark Testbedrift ' || ${orgSql} || ' AS'` },
          providerBinding(k, ':bench_k'),
        ],
      };
    },
  });

  return [
    {
      id: '1',
      title: 'get participant by qualified identifier (SP, own)',
      unit: 'requests',
      pgbenchVariables: [participantN],
      draw() {
        const n = 1 + random(count);
        const k = providerIndexOf(n);
        return {
          requests: [
            {
              method: 'GET',
              path: `/rest/api/participants/${encodeURIComponent(qualifiedIdentifierOf(n))}`,
              headers: { ...JSON_ACCEPT, authorization: providerAuth[k] as string },
            },
          ],
          bindings: [...participantBindings(n), providerBinding(k, `${sqlKeys.providerIndex(N)}`)],
        };
      },
    },
    {
      id: '2a',
      title: 'get process (anonymous)',
      unit: 'requests',
      pgbenchVariables: [processK],
      draw: () => getProcess(false),
    },
    {
      id: '2b',
      title: 'get process (SP credentials)',
      unit: 'requests',
      pgbenchVariables: [processK],
      draw: () => getProcess(true),
    },
    {
      id: '3',
      title: 'find processes, default page (anonymous)',
      unit: 'requests',
      pgbenchVariables: [],
      draw: () => ({ requests: [{ method: 'GET', path: '/rest/api/processes', headers: JSON_ACCEPT }], bindings: [] }),
    },
    {
      id: '4',
      title: 'search participants by name fragment, page of 30 (AUT)',
      unit: 'requests',
      pgbenchVariables: [`\\set bench_w random(1, ${NAME_FRAGMENTS.length})`],
      draw() {
        const fragment = NAME_FRAGMENTS[random(NAME_FRAGMENTS.length)] as string;
        const sql = element(NAME_FRAGMENTS, ':bench_w');
        return {
          requests: [
            {
              method: 'GET',
              path: `/rest/api/participants?query=${encodeURIComponent(fragment)}&size=30`,
              headers: { ...JSON_ACCEPT, authorization: authority },
            },
          ],
          bindings: [
            { value: `%${fragment}%`, sql: `'%' || ${sql} || '%'` },
            { value: `${fragment}%`, sql: `${sql} || '%'` },
            { value: fragment, sql },
          ],
        };
      },
    },
    {
      id: '5',
      title: 'filter by ICD and 90-day modification range, by name, page of 50 (AUT)',
      unit: 'requests',
      pgbenchVariables: [participantN, '\\set bench_d random(90, 1825)'],
      draw() {
        const icd = icdOf(1 + random(count));
        const daysAgo = 90 + random(1736);
        const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
        const [from, to] = [day(daysAgo), day(daysAgo - 90)];
        return {
          requests: [
            {
              method: 'GET',
              path: `/rest/api/participants?icd=${icd}&lastModificationDateFrom=${from}&lastModificationDateTo=${to}&sort=name&size=50`,
              headers: { ...JSON_ACCEPT, authorization: authority },
            },
          ],
          bindings: [
            { value: icd, sql: sqlKeys.icd(N) },
            { value: from, sql: `(current_date - :bench_d::int)::text` },
            { value: to, sql: `(current_date - :bench_d::int + 90)::text` },
          ],
        };
      },
    },
    addThenDelete('6', 'add participant with two processes, then delete it (SP)'),
    addThenDelete('6s', 'add participant with two processes, then delete it (SP), one client', 1),
    {
      id: '7',
      title: 'organization processes (anonymous)',
      unit: 'requests',
      pgbenchVariables: [participantN],
      draw() {
        const n = 1 + random(count);
        return {
          requests: [
            {
              method: 'GET',
              path: `/rest/api/organizations/${encodeURIComponent(qualifiedIdentifierOf(n))}/processes`,
              headers: JSON_ACCEPT,
            },
          ],
          bindings: participantBindings(n),
        };
      },
    },
    {
      // Its counts read at most 100,000 rows each, then estimate: what it costs at the data set's size (issue 32).
      id: 'status',
      title: 'the status read (AUT)',
      unit: 'requests',
      pgbenchVariables: [],
      draw: () => ({
        requests: [{ method: 'GET', path: '/rest/api/status', headers: { ...JSON_ACCEPT, authorization: authority } }],
        bindings: [],
      }),
    },
    ...smpScenarios(data),
  ];
}

/** A text literal pgbench leaves alone: it would read `:name` inside quotes as one of its variables. */
function colonFreeLiteral(value: string): Binding {
  return {
    value,
    sql: value
      .split(':')
      .map((part) => `'${part.replaceAll("'", "''")}'`)
      .join(' || chr(58) || '),
  };
}

/** Participants the warm SMP scenarios repeat: few enough that each answer is kept (once the cache is wired). */
const WARM_LOOKUPS = 50;

/**
 * A warm scenario's lookups: a few over and over. A cold one's: each a participant this scenario has not looked up
 * before, in the sample's (random) order, so that no answer the service kept is asked again; once the sample is
 * spent (a small data set, or a run longer than it) they come round again.
 */
function lookupDraws(lookups: readonly SmpLookup[], warm: boolean): () => SmpLookup {
  if (warm) return () => lookups[random(Math.min(WARM_LOOKUPS, lookups.length))] as SmpLookup;
  let next = 0;
  return () => lookups[next++ % lookups.length] as SmpLookup;
}

/** The SMP read interface, anonymous as the network calls it: the service group and the signed service metadata. */
function smpScenarios(data: Dataset): Scenario[] {
  const serviceGroup = (draw: () => SmpLookup) => (): Draw => ({
    requests: [{ method: 'GET', path: `/${encodeURIComponent(draw().participant)}`, headers: {} }],
    bindings: [],
  });
  const metadata =
    (draw: () => SmpLookup, headers: Record<string, string> = {}) =>
    (): Draw => {
      const lookup = draw();
      const path = `/${encodeURIComponent(lookup.participant)}/services/${encodeURIComponent(lookup.documentType)}`;
      const separator = lookup.documentType.indexOf('::');
      const documentTypeParts = [lookup.documentType.slice(0, separator), lookup.documentType.slice(separator + 2)];
      return { requests: [{ method: 'GET', path, headers }], bindings: documentTypeParts.map(colonFreeLiteral) };
    };
  // A cache revalidating its copy: `*` matches the answer's tag as the copy's own tag would, by the same comparison, so
  // the answer is a 304 (made without signing) and the scenario needs no tag learned beforehand.
  const revalidating = { 'if-none-match': '*' };
  const scenario = (id: string, title: string, make: () => Draw): Scenario => ({
    id,
    title,
    unit: 'requests',
    pgbenchVariables: [],
    draw: make,
  });
  const draws = (warm: boolean) => lookupDraws(data.smpLookups, warm);
  return [
    scenario('smp1', 'SMP service group, cold (anonymous)', serviceGroup(draws(false))),
    scenario('smp2', 'SMP service group, warm (anonymous)', serviceGroup(draws(true))),
    scenario('smp3', 'SMP signed service metadata, cold (anonymous)', metadata(draws(false))),
    scenario('smp4', 'SMP signed service metadata, warm (anonymous)', metadata(draws(true))),
    scenario(
      'smp5',
      'SMP signed service metadata, cold, revalidated: 304 (anonymous)',
      metadata(draws(false), revalidating),
    ),
    scenario(
      'smp6',
      'SMP signed service metadata, warm, revalidated: 304 (anonymous)',
      metadata(draws(true), revalidating),
    ),
  ];
}

/** Scenario 8: every participant through the array variant, one request at a time. */
export function streamRequest(data: Dataset): BenchRequest {
  return {
    method: 'GET',
    path: '/rest/api/participants',
    headers: { ...STREAM_ACCEPT, authorization: basic(data.authority, data.password) },
  };
}
