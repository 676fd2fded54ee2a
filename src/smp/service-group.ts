import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import type { QualifiedIdentifier } from '../core/schemas.js';
import type { Queryable } from '../db/database.js';
import type { Receiver } from './repository.js';

const defined = <T>(value: T | undefined): value is T => value !== undefined;

const bySchemeThenValue = (a: QualifiedIdentifier, b: QualifiedIdentifier) =>
  (a.scheme < b.scheme ? -1 : a.scheme > b.scheme ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0);

/** `scheme::value` as stored, split at its first `::`. */
function identifierOf(qualified: string): QualifiedIdentifier {
  const separator = qualified.indexOf('::');
  return { scheme: qualified.slice(0, separator), value: qualified.slice(separator + 2) };
}

/**
 * The document types an organization's service group lists, from the catalogue held in memory: each visible document
 * type of each visible process of a participant whose provider's access point has an endpoint with a certificate (an
 * endpoint without one is not published), each once, in scheme then value order (by code unit, whatever the
 * database's collation).
 */
export async function publishedDocumentTypes(catalogue: CatalogueCache, receivers: readonly Receiver[], db?: Queryable): Promise<QualifiedIdentifier[]> {
  const providers = await catalogue.rowsHolding('service-provider', receivers.map(({ provider }) => provider), db);
  const accessPointOf = (provider: string) => providers.row(provider)?.accessPoint?.identifier;
  const accessPoints = await catalogue.rowsHolding('access-point', receivers.map(({ provider }) => accessPointOf(provider)).filter(defined), db);
  const processes = await catalogue.rowsHolding('process', receivers.flatMap((receiver) => receiver.processes), db);
  const listed = new Set<string>();
  for (const { provider, processes: ids } of receivers) {
    const accessPoint = accessPoints.row(accessPointOf(provider) ?? '');
    if (!accessPoint?.endpoints.some((endpoint) => endpoint.certificate !== undefined)) continue;
    for (const process of ids.map((id) => processes.row(id))) {
      if (!process?.visible) continue;
      for (const documentType of process.documentTypes) if (documentType.visible) listed.add(documentType.qualifiedIdentifier);
    }
  }
  return [...listed].map(identifierOf).sort(bySchemeThenValue);
}
