/**
 * What participant writes and imports ask of service providers. Here, not in service-providers/: that folder builds
 * on this one (ending a provider expires its participants).
 */
import type { Queryable } from '../db/database.js';

/** Which of `ids` are service providers, each kept from deletion until the transaction ends. */
export async function existingServiceProviders(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const rows = await tx.query<{ id: string }>(
    'SELECT id FROM service_providers WHERE id = ANY($1::uuid[]) ORDER BY id FOR KEY SHARE',
    [[...new Set(ids)]],
  );
  return new Set(rows.map((row) => row.id));
}

export async function serviceProviderExists(tx: Queryable, id: string): Promise<boolean> {
  const rows = await tx.query('SELECT 1 FROM service_providers WHERE id = $1 FOR KEY SHARE', [id]);
  return rows.length > 0;
}
