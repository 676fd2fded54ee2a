import type { AccessPoint } from '../access-points/schemas.js';
import type { CatalogueCache, HeldRows } from '../catalogue-cache/catalogue-cache.js';
import { NOT_HELD, type NotHeld } from '../core/held.js';
import { parseQualifiedIdentifier, type QualifiedIdentifier } from '../core/schemas.js';
import { nextRemovalOf, publishedAt } from '../processes/publication.js';
import type { Process } from '../processes/schemas.js';
import type { Receiver } from './receivers.js';
import type { ServiceProvider } from '../service-providers/schemas.js';
import { hrefSegment } from './xml.js';

const bySchemeThenValue = (a: QualifiedIdentifier, b: QualifiedIdentifier) =>
  a.scheme < b.scheme ? -1 : a.scheme > b.scheme ? 1 : a.value < b.value ? -1 : a.value > b.value ? 1 : 0;

/**
 * The lists made, per held processes (a catalogue change holds new ones, so a list never outlives what it was made
 * from) and per set of process ids: organizations share a handful of sets, so most lookups make none. A list holds
 * until the first removal instant of its processes and document types after it was made.
 */
const listsMade = new WeakMap<HeldRows<Process>, Map<string, { list: readonly string[]; until: number }>>();
/** Sets whose list is kept per held processes: a list is a few kilobytes at most. */
const LISTS_KEPT = 10_000;

/** The `hrefSegment`s of the document types of the processes `ids` published at `now`, each once, by scheme then value. */
function listOf(processes: HeldRows<Process>, ids: ReadonlySet<string>, now: number): readonly string[] {
  let lists = listsMade.get(processes);
  if (!lists) listsMade.set(processes, (lists = new Map()));
  const key = [...ids].sort().join(' ');
  const made = lists.get(key);
  if (made && now < made.until) return made.list;
  const listed = new Set<string>();
  const rows = [...ids].map((id) => processes.row(id));
  for (const process of rows) {
    if (!process || !publishedAt(process, now)) continue;
    for (const documentType of process.documentTypes)
      if (publishedAt(documentType, now)) listed.add(documentType.qualifiedIdentifier);
  }
  const list = [...listed]
    .flatMap((qualified) => parseQualifiedIdentifier(qualified) ?? [])
    .sort(bySchemeThenValue)
    .map(hrefSegment);
  if (lists.size >= LISTS_KEPT) lists.clear();
  lists.set(key, { list, until: nextRemovalOf(rows, now) });
  return list;
}

/** What the catalogue holds of an organization's receivers: their providers' access points, their processes. */
export interface ReceiversCatalogue {
  accessPointOf(provider: string): AccessPoint | undefined;
  processes: HeldRows<Process>;
}

/**
 * What an organization's service group lists at `now`, as `hrefSegment`s, from the catalogue held in memory: each
 * published document type (publication.ts) of each published process of a participant whose provider's access point
 * has an endpoint with a certificate (an endpoint without one is not published), each once, in scheme then value order
 * (by code unit, whatever the database's collation).
 */
export function publishedReferences(
  { accessPointOf, processes }: ReceiversCatalogue,
  receivers: readonly Receiver[],
  now: number,
): readonly string[] {
  const published = receivers.filter(({ provider }) =>
    accessPointOf(provider)?.endpoints.some((endpoint) => endpoint.certificate !== undefined),
  );
  return listOf(processes, new Set(published.flatMap((receiver) => receiver.processes)), now);
}

/** The first removal instant after `now` among the receivers' processes and their document types: what an answer built from them holds until. */
export function nextRemovalFor({ processes }: ReceiversCatalogue, receivers: readonly Receiver[], now: number): number {
  return nextRemovalOf(
    processesOf(receivers).map((id) => processes.row(id)),
    now,
  );
}

const providersOf = (receivers: readonly Receiver[]) => receivers.map(({ provider }) => provider);
const processesOf = (receivers: readonly Receiver[]) => receivers.flatMap((receiver) => receiver.processes);

function receiversCatalogue(
  providers: HeldRows<ServiceProvider>,
  accessPoints: HeldRows<AccessPoint>,
  processes: HeldRows<Process>,
): ReceiversCatalogue {
  return { accessPointOf: (provider) => accessPoints.row(accessPointIdOf(providers, provider) ?? ''), processes };
}

const accessPointIdOf = (providers: HeldRows<ServiceProvider>, provider: string) =>
  providers.row(provider)?.accessPoint?.identifier;
const accessPointIdsOf = (providers: HeldRows<ServiceProvider>, receivers: readonly Receiver[]) =>
  receivers.flatMap(({ provider }) => accessPointIdOf(providers, provider) ?? []);

/**
 * What the catalogue holds now of an organization's receivers (`CatalogueCache.rowsHeld`); `NOT_HELD` when a kind must
 * be loaded first. An early answer takes this alone; a route's `catalogueOf` starts with it.
 */
export function catalogueHeld(
  catalogue: Pick<CatalogueCache, 'rowsHeld'>,
  receivers: readonly Receiver[],
): ReceiversCatalogue | NotHeld {
  const providers = catalogue.rowsHeld('service-provider', providersOf(receivers));
  if (providers === NOT_HELD) return NOT_HELD;
  const accessPoints = catalogue.rowsHeld('access-point', accessPointIdsOf(providers, receivers));
  const processes = catalogue.rowsHeld('process', processesOf(receivers));
  return accessPoints === NOT_HELD || processes === NOT_HELD
    ? NOT_HELD
    : receiversCatalogue(providers, accessPoints, processes);
}

/** What the catalogue holds of an organization's receivers: `catalogueHeld` when it is held, else loaded. */
export async function catalogueOf(
  catalogue: CatalogueCache,
  receivers: readonly Receiver[],
): Promise<ReceiversCatalogue> {
  const held = catalogueHeld(catalogue, receivers);
  if (held !== NOT_HELD) return held;
  const providers = await catalogue.rowsHolding('service-provider', providersOf(receivers));
  const accessPoints = await catalogue.rowsHolding('access-point', accessPointIdsOf(providers, receivers));
  return receiversCatalogue(providers, accessPoints, await catalogue.rowsHolding('process', processesOf(receivers)));
}
