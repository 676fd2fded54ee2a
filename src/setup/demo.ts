import { randomBytes } from 'node:crypto';
import { ACCESS_POINT_PROVIDER_TABLE, insertAccessPointProvider } from '../access-point-providers/repository.js';
import { ACCESS_POINT_TABLE, insertAccessPoint } from '../access-points/repository.js';
import type { CatalogueTable } from '../db/catalogue-table.js';
import { appendChange, SYSTEM_ACTOR, type Change } from '../db/change-log.js';
import type { Database, Queryable } from '../db/database.js';
import { PROCESS_REFERENCE, resolveReferences } from '../db/references.js';
import { resourceReads } from '../db/sql.js';
import { Role } from '../http/auth.js';
import { registerParticipant } from '../participants/writes.js';
import { insertServiceProvider, SERVICE_PROVIDER_TABLE } from '../service-providers/repository.js';
import { insertUser } from '../users/repository.js';
import { transportProfileIdOf } from '../code-lists/repository.js';

const DEMO_USERNAME = 'demo-provider';
export const BILLING_PROCESS = 'cenbii-procid-ubl::urn:fdc:peppol.eu:2017:poacc:billing:01:1.0';
const AS4 = 'peppol-transport-as4-v2_0';
/**
 * The demo access point's certificate (base64 DER): self-signed, valid until 2056, NOT a Peppol certificate; its key
 * was thrown away. Only so that the SMP publishes the demo participants.
 */
const DEMO_AP_CERTIFICATE = [
  'MIIDbzCCAlegAwIBAgIUd6kEpBbFkjBo8H4IZE3wsIMXTD0wDQYJKoZIhvcNAQELBQAwRjE1MDMGA1UEAwwsRGVtbyBBY2Nlc3Mg',
  'UG9pbnQgKG5vdCBhIFBlcHBvbCBjZXJ0aWZpY2F0ZSkxDTALBgNVBAoMBERlbW8wIBcNMjYxMTIzMDAyMDE5WhgPMjA1NjExMTUw',
  'MDIwMTlaMEYxNTAzBgNVBAMMLERlbW8gQWNjZXNzIFBvaW50IChub3QgYSBQZXBwb2wgY2VydGlmaWNhdGUpMQ0wCwYDVQQKDARE',
  'ZW1vMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAlW3Y+eGo33pAqjd83roV7oGV9/1Qz2PVskW8d7bP9vCkvzas3Hl9',
  'jZ98bAFlGC19PBRAQqRh/b+gQDACxzI+VwFoh/U/8xqAgbwPuqADutwqp2BG0VVx3eyDGSogjuNzdSR66WeSNlD5S3Py0V18cCgz',
  'bCcRHF+Tl7n0qiI3oZM97zNotr11BA/MqY7pyyYhYMVkYtvOdO/uptJVKotQx4DdBu99l53dPg0Uq72s1XbQkMJlv5sYSJlcxaI4',
  'xb8oZXzhpDoCnZzt87vaksXqY2kG8WEC7bAXDgz6M2hc+AzdxlkG8RmDnlTmIIqITcK8b+zKk8GGySPVV3jGRU8JXwIDAQABo1Mw',
  'UTAdBgNVHQ4EFgQU+bz47zDuUod0+YnDYTFsJMxofHcwHwYDVR0jBBgwFoAU+bz47zDuUod0+YnDYTFsJMxofHcwDwYDVR0TAQH/',
  'BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEARqwSSe9B4lYAVizX6sUHWXfN6TAYqzcCB/ZpUXs4/GTC12001yv2PCsmFtPaDy0x',
  'KD5ZF/DE1XcuqpiyIloUOU7kQyR0Jel2HAPEDgkvddc3+K/mLtA9wfnPIQUUKCQFnQ6Wh7YHXuY3brXwjSBNyHXdPBk1OShelMbh',
  '0NTUMYuhl2vp1pxDm6i7gluE7eVg868n4V9ul5Sug4lu3sVWu3x15yewATIK+78jAf51yY/lX2GUrV8a0q7KfWBJTtoyAVuI9QQ5',
  '6adsBh/DBQbp0h88GVUPT2MMARJc3Bw03E4wDIJUMWPLRt06jlU0eF2NAVtaPl0cknCR7KjKgE4MWw==',
].join('');

const DEMO_PARTICIPANTS: Array<{ icd: string; organizationIdentifier: string; name: string; contact: string }> = [
  { icd: '0192', organizationIdentifier: '910000004', name: 'Demo Bakery AS', contact: 'Ola Nordmann' },
  { icd: '0007', organizationIdentifier: '5560000001', name: 'Demo Timber AB', contact: 'Anna Svensson' },
  { icd: '0088', organizationIdentifier: '7300000000004', name: 'Demo Wholesale Ltd', contact: 'Jane Smith' },
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
    const otherServiceProviderId = await insertServiceProvider(tx, {
      title: 'Demo Service Provider Two',
      accessPointId,
    });
    await appendChange(tx, SYSTEM_ACTOR, [
      await created(tx, ACCESS_POINT_PROVIDER_TABLE, accessPointProviderId),
      await created(tx, ACCESS_POINT_TABLE, accessPointId),
      await created(tx, SERVICE_PROVIDER_TABLE, serviceProviderId),
      await created(tx, SERVICE_PROVIDER_TABLE, otherServiceProviderId),
    ]);
    const password = randomBytes(15).toString('base64url');
    await insertUser(tx, { username: DEMO_USERNAME, password, role: Role.serviceProvider, serviceProviderId });
    await addDemoParticipants(tx, serviceProviderId);
    return { username: DEMO_USERNAME, password, serviceProvider: 'Demo Service Provider One' };
  });
}

async function demoEndpoints(tx: Queryable) {
  const transportProfileId = await transportProfileIdOf(tx, AS4);
  return transportProfileId
    ? [
        {
          url: 'https://ap.demo.invalid/as4',
          transportProfileId,
          certificateTypes: ['PEPPOL_AP_PILOT'],
          certificate: DEMO_AP_CERTIFICATE,
          serviceDescription: 'Demo access point (AS4)',
          technicalContactUrl: 'mailto:operations@ap.demo.invalid',
        },
      ]
    : [];
}

/** With the billing process when the catalogue has it (the starter catalogue does). */
async function addDemoParticipants(tx: Queryable, serviceProviderId: string): Promise<void> {
  const { ids } = await resolveReferences(
    tx,
    PROCESS_REFERENCE,
    [{ qualifiedIdentifier: BILLING_PROCESS }],
    'processes',
  );
  const processes = ids.map((identifier) => ({ identifier }));
  for (const participant of DEMO_PARTICIPANTS) {
    await registerParticipant(tx, SYSTEM_ACTOR, serviceProviderId, {
      ...participant,
      contact: { name: participant.contact },
      processes,
    });
  }
}

/** The change that adding the row `identifier` of `table` makes, the row as the API shows it. */
const created = async (tx: Queryable, table: CatalogueTable, identifier: string): Promise<Change> => ({
  resource: table.kind,
  identifier,
  operation: 'create',
  before: null,
  after: await resourceReads(table).getById(tx, identifier),
});
