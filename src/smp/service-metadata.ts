import type { AccessPoint } from '../access-points/schemas.js';
import type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';
import { formatQualifiedIdentifier, parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import type { SortOrder } from '../core/paging.js';
import type { Receiver } from './receivers.js';
import { publishedAt } from '../processes/publication.js';
import { catalogueOf, nextRemovalFor } from './service-group.js';
import type { PublishedEndpoint, PublishedProcess } from './xml.js';

/** The database's order of the processes' identifiers (its collation), as the answers listed them when a join read them. */
const BY_SCHEME_THEN_VALUE: readonly SortOrder[] = [
  { property: 'qualifiedIdentifier.scheme', direction: 'ASC' },
  { property: 'qualifiedIdentifier.value', direction: 'ASC' },
];

/** xs:dateTime in UTC, to the second, from the API's ISO 8601 timestamp with milliseconds. */
const toTheSecond = (timestamp: string | undefined) => (timestamp ? `${timestamp.slice(0, 19)}Z` : null);

/**
 * An access point's endpoints as the SMP publishes them: only those with a certificate (the SMP schema requires one);
 * the access point's title describes an endpoint without a description, its provider's email is the contact of one
 * without a contact URL.
 */
function publishedEndpoints(accessPoint: AccessPoint): PublishedEndpoint[] {
  const email = accessPoint.provider.contact?.email;
  return accessPoint.endpoints.flatMap(({ certificate, ...endpoint }) =>
    certificate === undefined
      ? []
      : [
          {
            transportProfile: endpoint.transportProfile.value,
            url: endpoint.url,
            certificate,
            serviceDescription: endpoint.serviceDescription ?? accessPoint.title,
            technicalContactUrl: endpoint.technicalContactUrl ?? (email ? `mailto:${email}` : ''),
            requireBusinessLevelSignature: endpoint.requireBusinessLevelSignature ?? false,
            activationDate: toTheSecond(endpoint.serviceActivationDate),
            expirationDate: toTheSecond(endpoint.serviceExpirationDate),
          },
        ],
  );
}

/**
 * The processes of an organization's live participants (`receivers`) that carry the document type at `now`, each with
 * the published endpoints of the access points of the providers receiving it, from the catalogue held in memory:
 * published processes with the document type published among theirs (publication.ts), in the database's order of their
 * identifiers; within one, each receiver's endpoints in their order. `until`: the first removal instant after `now` of
 * the receivers' processes and document types, which an answer built from them holds until.
 */
export async function publishedProcesses(
  catalogue: CatalogueCache,
  receivers: readonly Receiver[],
  documentType: QualifiedIdentifier,
  now: number,
): Promise<{ processes: PublishedProcess[]; until: number }> {
  const held = await catalogueOf(catalogue, receivers);
  const { accessPointOf, processes } = held;
  const wanted = formatQualifiedIdentifier(documentType);
  const endpointsOf = new Map<string, PublishedEndpoint[]>();
  for (const { provider, processes: ids } of receivers) {
    const accessPoint = accessPointOf(provider);
    const endpoints = accessPoint ? publishedEndpoints(accessPoint) : [];
    if (endpoints.length === 0) continue;
    for (const id of ids) endpointsOf.set(id, [...(endpointsOf.get(id) ?? []), ...endpoints]);
  }
  const published = processes
    .rowsIn([...endpointsOf.keys()], BY_SCHEME_THEN_VALUE)
    .filter(
      (process) =>
        publishedAt(process, now) &&
        process.documentTypes.some((type) => publishedAt(type, now) && type.qualifiedIdentifier === wanted),
    )
    .map((process) => ({
      process: parseQualifiedIdentifier(process.qualifiedIdentifier) as QualifiedIdentifier,
      endpoints: endpointsOf.get(process.identifier) ?? [],
    }));
  return { processes: published, until: nextRemovalFor(held, receivers, now) };
}
