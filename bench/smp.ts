import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { Database } from '../src/db/database.js';
import { checkedKey, type SmpKey } from '../src/smp/keys.js';

const YEAR = 365 * 24 * 3600_000;

async function certificate(commonName: string) {
  return generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + YEAR),
  });
}

/**
 * A throw-away SMP key and certificate in PEM files, as the service reads them from its configuration, and the
 * public URL a production SMP has behind its proxy (with it, service groups are kept as signed answers are). The files
 * go when the benchmark's process exits.
 */
export async function benchSmpKey(): Promise<{ key: SmpKey; env: Record<string, string> }> {
  const pems = await certificate('registry bench SMP');
  const dir = await mkdtemp(join(tmpdir(), 'registry-bench-smp-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const env = {
    REGISTRY_SMP_KEY_FILE: join(dir, 'smp-key.pem'),
    REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'smp-certificate.pem'),
    REGISTRY_PUBLIC_URL: 'https://smp.bench.example',
  };
  await writeFile(env.REGISTRY_SMP_KEY_FILE, pems.private, { mode: 0o600 });
  await writeFile(env.REGISTRY_SMP_CERTIFICATE_FILE, pems.cert);
  return { key: checkedKey(pems.private, pems.cert, false), env };
}

/** The bench access point gets one AS4 endpoint with a certificate, so that every participant is published. */
export async function addPublishedEndpoint(db: Database, accessPointId: string): Promise<void> {
  const pems = await certificate('bench access point');
  const der = pems.cert.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
  await db.query(
    `INSERT INTO endpoints (access_point_id, position, url, transport_profile_id, certificate, service_description, technical_contact_url)
     SELECT $1, 1, 'https://ap.bench.invalid/as4', id, $2, 'Bench access point', 'mailto:ops@ap.bench.invalid'
       FROM transport_profiles ORDER BY value LIKE '%as4%' DESC, value LIMIT 1`,
    [accessPointId, der],
  );
}

export interface SmpLookup {
  participant: string;
  documentType: string;
}

/** Published (participant, document type) pairs of random participants: the keys the SMP scenarios look up. */
export function sampleLookups(db: Database, count: number): Promise<SmpLookup[]> {
  return db.query<SmpLookup>(
    `WITH first_of_process AS (
       SELECT DISTINCT ON (pr.id) pr.id, dt.value, dt.scheme || '::' || dt.value AS "documentType"
         FROM processes pr
         JOIN process_document_types pdt ON pdt.process_id = pr.id
         JOIN document_types dt ON dt.id = pdt.document_type_id AND dt.visible
        WHERE pr.visible
        ORDER BY pr.id, dt.value)
     SELECT DISTINCT ON (pa.id) 'iso6523-actorid-upis::' || pa.icd || ':' || pa.organization_identifier AS participant, first."documentType"
       FROM (SELECT * FROM participants ORDER BY random() LIMIT $1) pa
       JOIN participant_processes pp ON pp.participant_id = pa.id
       JOIN first_of_process first ON first.id = pp.process_id
      ORDER BY pa.id, first.value`,
    [count],
  );
}
