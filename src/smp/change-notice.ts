/** One committed change, as the change log announces it to caches (the contract of COMMON.md). */
export type { ChangeNotice } from '../db/change-log.js';
