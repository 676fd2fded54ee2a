import { FeedCursors } from '../../src/changes/cursors.js';
import type { Queryable } from '../../src/db/database.js';

/** The position a cursor of the change feed seals (the service's own reading of it). */
export const positionOf = (db: Queryable, cursor: string) => new FeedCursors(db).positionOf(cursor);

/** The change log's last position, and the feed's cursor there (sealed as the service seals it). */
export async function feedEnd(db: Queryable): Promise<{ seq: number; cursor: string }> {
  const [row] = await db.query<{ seq: number }>('SELECT seq FROM change_log_position');
  const seq = row?.seq ?? 0;
  return { seq, cursor: await new FeedCursors(db).cursorOf(seq) };
}
