import type { Queryable } from '../db/database.js';
import type { Organization } from '../participants/identifiers.js';
import { participantIsLive } from '../participants/repository.js';
import { PROCESS_RESPONSE_COLUMNS } from '../processes/repository.js';
import type { Process } from '../processes/schemas.js';

/**
 * The processes of all live participants of an organization, each once, in qualified identifier order;
 * undefined when the organization has no live participant.
 */
export async function organizationProcesses(db: Queryable, organization: Organization): Promise<Process[] | undefined> {
  const [row] = await db.query<{ registered: boolean; processes: Process[] }>(
    `SELECT EXISTS (SELECT 1 FROM participants pa
                     WHERE pa.icd = $1 AND pa.organization_identifier = $2 AND ${participantIsLive('pa')}) AS registered,
            (SELECT coalesce(json_agg(x ORDER BY x."qualifiedIdentifier", x.identifier), '[]'::json)
               FROM (SELECT ${PROCESS_RESPONSE_COLUMNS} FROM processes p
                      WHERE p.id IN (SELECT pp.process_id FROM participant_processes pp
                                       JOIN participants pa ON pa.id = pp.participant_id
                                      WHERE pp.icd = $1 AND pp.organization_identifier = $2 AND ${participantIsLive('pa')})) x) AS processes`,
    [organization.icd, organization.organizationIdentifier],
  );
  return row?.registered ? row.processes : undefined;
}
