import { appendChange, type Actor, type Change } from '../db/change-log.js';
import type { Queryable } from '../db/database.js';
import { utcInstant } from '../db/sql.js';
import { LOST, REMOVALS_MAX_DAYS } from './removals.js';

/** A catalogue entry a provider's participants lose at the notice's instant, and how many of them. */
interface NoticeEntry {
  resource: 'process' | 'document-type';
  identifier: string;
  qualifiedIdentifier: string;
  participants: number;
}

/**
 * What a service provider's live participants lose at one coming removal instant: the feed's `removal-notice`, one
 * per provider and instant, however many participants (they are listed by GET /rest/api/catalogue/removals).
 */
export interface RemovalNotice {
  provider: { identifier: string; title: string };
  removedFrom: string;
  /** Participants of the provider that lose something at `removedFrom`. */
  participants: number;
  entries: NoticeEntry[];
  /** The operation that lists them one by one, asked far enough ahead to include the instant. */
  listing: string;
}

interface NoticeRow {
  providerId: string;
  providerTitle: string;
  removedFrom: string;
  /** Null on the row that counts the provider's participants at the instant (the grouping set without the entry). */
  resource: NoticeEntry['resource'] | null;
  identifier: string | null;
  qualifiedIdentifier: string | null;
  participants: number;
}

const ENTRY = {
  resource: "CASE WHEN l.document_type_id IS NULL THEN 'process' ELSE 'document-type' END",
  identifier: 'coalesce(l.document_type_id, l.process_id)',
  qualifiedIdentifier: 'coalesce(l.document_type, l.process)',
};

/**
 * One grouped query over the live participants that lose something at a coming instant: per provider and instant,
 * the participants losing anything, and per entry they lose, how many. Its rows are bounded by providers x instants x
 * catalogue entries, whatever the number of participants.
 */
const NOTICE_ROWS = `${LOST}
  SELECT l.service_provider_id AS "providerId", sp.title AS "providerTitle", ${utcInstant('l.removed_from')} AS "removedFrom",
         ${ENTRY.resource} AS resource, ${ENTRY.identifier} AS identifier, ${ENTRY.qualifiedIdentifier} AS "qualifiedIdentifier",
         count(DISTINCT l.participant_id)::int AS participants
    FROM lost l JOIN service_providers sp ON sp.id = l.service_provider_id
   GROUP BY GROUPING SETS ((l.service_provider_id, sp.title, l.removed_from),
                           (l.service_provider_id, sp.title, l.removed_from, ${ENTRY.resource}, ${ENTRY.identifier}, ${ENTRY.qualifiedIdentifier}))`;

const DAY_MS = 86_400_000;

const keyOf = (providerId: string, removedFrom: string) => `${providerId} ${removedFrom}`;

/** Every provider's notices as the catalogue stands now in `tx`, by provider and instant. */
async function noticesNow(tx: Queryable): Promise<Map<string, RemovalNotice>> {
  const notices = new Map<string, RemovalNotice>();
  const rows = await tx.query<NoticeRow>(NOTICE_ROWS, [null, REMOVALS_MAX_DAYS]);
  for (const row of rows) {
    const key = keyOf(row.providerId, row.removedFrom);
    const days = Math.min(REMOVALS_MAX_DAYS, Math.ceil((Date.parse(row.removedFrom) - Date.now()) / DAY_MS));
    const notice = notices.get(key) ?? {
      provider: { identifier: row.providerId, title: row.providerTitle },
      removedFrom: row.removedFrom,
      participants: 0,
      entries: [],
      listing: `/rest/api/catalogue/removals?days=${days}`,
    };
    notices.set(key, notice);
    if (row.resource === null || row.identifier === null || row.qualifiedIdentifier === null)
      notice.participants = row.participants;
    else
      notice.entries.push({
        resource: row.resource,
        identifier: row.identifier,
        qualifiedIdentifier: row.qualifiedIdentifier,
        participants: row.participants,
      });
  }
  for (const notice of notices.values())
    notice.entries.sort((a, b) => a.qualifiedIdentifier.localeCompare(b.qualifiedIdentifier));
  return notices;
}

/** What a notice says, without its listing's `days` (which only counts down). */
const saying = ({ listing: _listing, ...notice }: RemovalNotice) => JSON.stringify(notice);

/**
 * The feed entries between two states: `create` where a provider's participants come to lose something at an instant,
 * `update` where what they lose then changed, `delete` where nothing of theirs goes then any more (moved or cleared).
 */
function noticeChanges(before: Map<string, RemovalNotice>, after: Map<string, RemovalNotice>): Change[] {
  const changes: Change[] = [];
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const [was, is] = [before.get(key) ?? null, after.get(key) ?? null];
    if (was !== null && is !== null && saying(was) === saying(is)) continue;
    const identifier = (is ?? was)?.provider.identifier ?? '';
    changes.push({
      resource: 'removal-notice',
      identifier,
      operation: was === null ? 'create' : is === null ? 'delete' : 'update',
      before: was,
      after: is,
    });
  }
  return changes;
}

/**
 * Runs `change`, a catalogue change that may set, move or clear removal dates, and appends in its transaction a
 * `removal-notice` for each provider and coming instant whose losses it changed: one grouped query before and one after.
 */
export async function withRemovalNotices<T>(tx: Queryable, actor: Actor, change: () => Promise<T>): Promise<T> {
  const before = await noticesNow(tx);
  const result = await change();
  await appendChange(tx, actor, noticeChanges(before, await noticesNow(tx)));
  return result;
}

/**
 * An authority's add or edit of a process or document type (app.ts gives it to their routes): a form that sets, moves
 * or clears a date tells the providers; any other form costs nothing more.
 */
export function noticesOfRemovalDate<T>(
  tx: Queryable,
  actor: Actor,
  form: object,
  write: () => Promise<T>,
): Promise<T> {
  return 'removedFrom' in form && form.removedFrom !== undefined ? withRemovalNotices(tx, actor, write) : write();
}
