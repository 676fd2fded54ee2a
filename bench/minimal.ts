/**
 * The database ceiling of each scenario: pgbench running the least work that answers the request, written by hand,
 * not the statements the service happens to send (that ceiling would move with the service). Each script draws
 * its keys the way the scenario does (bench/keys.ts), so it reads the same rows at the same spread.
 */
import { EXACT_COUNT_LIMIT } from '../src/status/counts.js';
import type { Dataset } from './dataset.js';
import { NAME_FRAGMENTS, PARTICIPANT_SCHEME, PROVIDER_COUNT, sqlKeys } from './keys.js';

const N = ':bench_n';
const participantN = (count: number) => `\\set bench_n random(1, ${count})`;
const LIVE = `(pa.delete_date IS NULL OR pa.delete_date > current_date)`;
/** Element `:variable` (1-based) of a literal array. */
const element = (values: readonly string[], variable: string, type = 'text') =>
  `('{${values.map((value) => `"${value}"`).join(',')}}'::${type}[])[${variable}]`;
const organizationOf = (n: string) =>
  `pa.icd = ${sqlKeys.icd(n)} AND pa.organization_identifier = ${sqlKeys.organization(n)}`;

/** An organization's live processes: the unique (icd, organization, process) index, joined to its participants. */
const organizationProcesses = (n: string) => `SELECT pp.process_id, pa.service_provider_id
  FROM participant_processes pp JOIN participants pa ON pa.id = pp.participant_id
 WHERE pp.icd = ${sqlKeys.icd(n)} AND pp.organization_identifier = ${sqlKeys.organization(n)} AND ${LIVE};`;

/** A change log entry as the contract requires of every write (numbered after the commit: `NUMBER_ENTRIES`). */
const changeEntry = (
  operation: string,
  provider: string,
  from: string,
) => `INSERT INTO change_log (resource, identifier, operation, origin, service_provider_ids, after)
SELECT 'participant', '${PARTICIPANT_SCHEME}' || chr(58) || chr(58) || '0192' || chr(58) || organization_identifier, '${operation}', 'api', ARRAY[${provider}], '{}'::jsonb ${from}`;

/** A write's entries get their positions once it has committed (migration 016). */
const NUMBER_ENTRIES = 'SELECT change_log_sequence();';

/** `statement` sent behind its BEGIN in one pipeline (pgbench allows no `\gset` there: keys are drawn, not returned). */
const behindBegin = (statement: string) => ['\\startpipeline', 'BEGIN;', statement, '\\endpipeline'];

/** The pgbench script of the least work for scenario `id`, or undefined when the scenario has none (the stream). */
export function minimalScript(id: string, data: Dataset): string | undefined {
  const count = data.participants;
  const processes = data.processIds.length;
  const benchProvider = element(
    data.providers.map((p) => p.id),
    ':bench_k',
    'uuid',
  );
  const benchOrganization = '(9000000000 + :bench_a)::text';
  const scripts: Record<string, string[]> = {
    // A participant by its unique key (organization, provider), with its process ids: the processes
    // themselves are catalogue data the service holds in memory.
    '1': [
      participantN(count),
      `SELECT pa.*, ARRAY(SELECT pp.process_id FROM participant_processes pp WHERE pp.participant_id = pa.id) AS processes
  FROM participants pa WHERE ${organizationOf(N)} AND pa.service_provider_id = ${element(
    data.providers.map((p) => p.id),
    `1 + ${sqlKeys.providerIndex(N)}`,
    'uuid',
  )} AND ${LIVE};`,
    ],
    // A process by primary key (its relations are catalogue data too).
    '2a': [
      `\\set bench_p random(1, ${processes})`,
      `SELECT * FROM processes WHERE id = ${element(data.processIds, ':bench_p', 'uuid')};`,
    ],
    '2b': [
      `\\set bench_p random(1, ${processes})`,
      `SELECT * FROM processes WHERE id = ${element(data.processIds, ':bench_p', 'uuid')};`,
    ],
    // The first page in primary-key order and the exact total.
    '3': ['SELECT *, count(*) OVER () AS total FROM processes ORDER BY id LIMIT 30;'],
    // The trigram index scan the name fragment needs, counting its hits and keeping the first 30 keys in that one
    // scan, then the page's rows by key. (Counting and then walking the key order apart read a rare fragment's
    // candidates twice and walked the primary key through tens of thousands of rows that fail the filter.)
    '4': [
      `\\set bench_w random(1, ${NAME_FRAGMENTS.length})`,
      `WITH hits AS (SELECT pa.id, count(*) OVER () AS total FROM (SELECT pa.id FROM participants pa WHERE (pa.name_lower LIKE '%' || ${element(NAME_FRAGMENTS, ':bench_w')} || '%' OR pa.organization_identifier LIKE ${element(NAME_FRAGMENTS, ':bench_w')} || '%') AND ${LIVE} OFFSET 0) pa ORDER BY pa.id LIMIT 30)
SELECT (SELECT total FROM hits LIMIT 1), pa.* FROM participants pa WHERE pa.id IN (SELECT id FROM hits);`,
    ],
    // The (icd, date) range's exact count, then the page of 50 by name from the (icd, name) index.
    '5': [
      participantN(count),
      '\\set bench_d random(90, 1825)',
      `SELECT count(*) FROM participants pa WHERE pa.icd = ${sqlKeys.icd(N)} AND pa.last_modification_date BETWEEN current_date - :bench_d::int AND current_date - :bench_d::int + 90 AND ${LIVE};`,
      `SELECT * FROM participants pa WHERE pa.icd = ${sqlKeys.icd(N)} AND pa.last_modification_date BETWEEN current_date - :bench_d::int AND current_date - :bench_d::int + 90 AND ${LIVE} ORDER BY pa.name, pa.id LIMIT 50;`,
    ],
    // One statement inserts the participant, its two processes and its change entry; one more deletes it by its key
    // (the processes go by cascade) with its entry. Two transactions, as the scenario's two requests, each statement
    // sent behind its BEGIN without waiting for it, as the service sends it (src/db/postgres.ts).
    '6': [
      '\\set bench_a random(1, 999999999)',
      `\\set bench_k random(1, ${PROVIDER_COUNT})`,
      ...behindBegin(`WITH pa AS (INSERT INTO participants (service_provider_id, icd, organization_identifier, name, registration_date, last_modification_date, contact_name, contact_email, contact_phone)
  VALUES (${benchProvider}, '0192', ${benchOrganization}, 'Benchmark Testbedrift AS', current_date, current_date, 'Kari Nordmann', 'kari@example.no', '+47 22 00 00 00')
  RETURNING id, icd, organization_identifier, service_provider_id),
pp AS (INSERT INTO participant_processes (participant_id, process_id, icd, organization_identifier)
  SELECT pa.id, unnest('{${data.freeProcessIds.join(',')}}'::uuid[]), pa.icd, pa.organization_identifier FROM pa)
${changeEntry('create', 'pa.service_provider_id', 'FROM pa')};`),
      'COMMIT;',
      NUMBER_ENTRIES,
      ...behindBegin(`WITH pa AS (DELETE FROM participants WHERE icd = '0192' AND organization_identifier = ${benchOrganization} AND service_provider_id = ${benchProvider} RETURNING organization_identifier, service_provider_id)
${changeEntry('delete', 'pa.service_provider_id', 'FROM pa')};`),
      'COMMIT;',
      NUMBER_ENTRIES,
    ],
    '7': [participantN(count), organizationProcesses(N)],
    // The SMP answers need the organization's processes and their provider; the document types, access points,
    // endpoints and certificates are catalogue data.
    smp1: [participantN(count), organizationProcesses(N)],
    smp2: ['\\set bench_n random(1, 50)', organizationProcesses(N)],
    smp3: [participantN(count), organizationProcesses(N)],
    smp4: ['\\set bench_n random(1, 50)', organizationProcesses(N)],
    // A revalidation reads what the answer shows, as a lookup does; only the signature is spared.
    smp5: [participantN(count), organizationProcesses(N)],
    smp6: ['\\set bench_n random(1, 50)', organizationProcesses(N)],
    // The promise the status keeps: participants counted exactly up to the limit (the other counts are of far fewer
    // rows, or of the catalogue the service holds in memory).
    status: [
      `SELECT count(*) FROM (SELECT 1 FROM participants pa WHERE ${LIVE} LIMIT ${EXACT_COUNT_LIMIT + 1}) bounded;`,
    ],
  };
  scripts['6s'] = scripts['6'] as string[];
  const lines = scripts[id];
  return lines ? `${lines.join('\n')}\n` : undefined;
}

/** The least work for the stream: every participant row through a cursor (provider titles are a small map). */
export const MINIMAL_STREAM_SQL = 'SELECT * FROM participants';
