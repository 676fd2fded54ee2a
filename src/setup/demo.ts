import { randomBytes } from 'node:crypto';
import { insertAccessPointProvider } from '../access-point-providers/repository.js';
import { insertAccessPoint } from '../access-points/repository.js';
import type { Database, Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { Role } from '../http/auth.js';
import type { Icd } from '../core/schemas.js';
import { registerParticipant } from '../participants/writes.js';
import { insertServiceProvider } from '../service-providers/repository.js';
import { insertUser } from '../users/repository.js';
import { transportProfileIdOf } from '../catalogue/repository.js';

const DEMO_USERNAME = 'demo-provider';
export const BILLING_PROCESS = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const AS4 = 'peppol-transport-as4-v2_0';

const DEMO_PARTICIPANTS: Array<{ icd: Icd; organizationIdentifier: string; name: string; contact: string }> = [
  { icd: '0192', organizationIdentifier: '910000001', name: 'Demo Bakery AS', contact: 'Ola Nordmann' },
  { icd: '0007', organizationIdentifier: '5560000001', name: 'Demo Timber AB', contact: 'Anna Svensson' },
  { icd: '0088', organizationIdentifier: '7300000000001', name: 'Demo Wholesale Ltd', contact: 'Jane Smith' },
];

export interface DemoUser {
  username: string;
  password: string;
  serviceProvider: string;
}

/**
 * A small demo registry for a first look: one access point provider with one access point, two service
 * providers, a SERVICE_PROVIDER user for the first, and a few of its participants with the Peppol billing
 * process. Made through the same data layer as the API, once: only into a registry without service providers.
 * Undefined when nothing was made.
 */
export async function createDemoSet(db: Database): Promise<DemoUser | undefined> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('registry-demo:' || current_schema()))`);
    const [existing] = await tx.query('SELECT 1 FROM service_providers LIMIT 1');
    if (existing) return undefined;
    const accessPointProviderId = await insertAccessPointProvider(tx, {
      title: 'Demo Access Point Provider',
      contact: { name: 'Demo Operations', email: 'operations@ap.demo.invalid' },
    });
    const accessPointId = await insertAccessPoint(tx, {
      title: 'Demo Access Point',
      providerId: accessPointProviderId,
      endpoints: await demoEndpoints(tx),
    });
    const serviceProviderId = await insertServiceProvider(tx, { title: 'Demo Service Provider One', accessPointId });
    await insertServiceProvider(tx, { title: 'Demo Service Provider Two', accessPointId });
    const password = randomBytes(15).toString('base64url');
    await insertUser(tx, { username: DEMO_USERNAME, password, role: Role.serviceProvider, serviceProviderId });
    await addDemoParticipants(tx, serviceProviderId);
    return { username: DEMO_USERNAME, password, serviceProvider: 'Demo Service Provider One' };
  });
}

async function demoEndpoints(tx: Queryable) {
  const transportProfileId = await transportProfileIdOf(tx, AS4);
  return transportProfileId
    ? [{ url: 'https://ap.demo.invalid/as4', transportProfileId, certificateTypes: ['PEPPOL_AP_PILOT'] }]
    : [];
}

/** With the billing process when the catalogue has it (the starter catalogue does). */
async function addDemoParticipants(tx: Queryable, serviceProviderId: string): Promise<void> {
  const { ids } = await resolveReferences(tx, PROCESS_REFERENCE, [{ qualifiedIdentifier: BILLING_PROCESS }], 'processes');
  const processes = ids.map((identifier) => ({ identifier }));
  for (const participant of DEMO_PARTICIPANTS) {
    await registerParticipant(tx, serviceProviderId, { ...participant, contact: { name: participant.contact }, processes });
  }
}
