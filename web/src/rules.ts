import type { Schemas } from './api/types.js';
import type { Translate } from './i18n.js';

type Process = Schemas['Process'];

/** What would stop a participant with `icd` and the `chosen` processes from newly taking `process`. */
export interface ProcessHint {
  restricted: boolean;
  /** The ICDs the process requires when the participant's is not among them, else empty. */
  requiredIcds: string[];
  /** Titles of processes it depends on that are not chosen. */
  missingDependencies: string[];
}

/**
 * The API's participant rules (src/participants/rules.ts) shown before submit: a restricted process cannot be
 * newly taken, a process with required ICDs only by a participant with one of them, and a process only with
 * every process it depends on. Processes the participant already had (`kept`) are not checked, as in the API.
 */
export function processHint(
  process: Process,
  icd: string,
  chosen: ReadonlySet<string>,
  kept: ReadonlySet<string> = new Set(),
): ProcessHint {
  if (kept.has(process.identifier)) return { restricted: false, requiredIcds: [], missingDependencies: [] };
  return {
    restricted: process.restricted,
    requiredIcds: process.requiredICDs.length > 0 && !process.requiredICDs.includes(icd) ? process.requiredICDs : [],
    missingDependencies: process.dependencies
      .filter((dependency) => !chosen.has(dependency.identifier))
      .map((dependency) => dependency.title),
  };
}

export function hintBlocks(hint: ProcessHint): boolean {
  return hint.restricted || hint.requiredIcds.length > 0 || hint.missingDependencies.length > 0;
}

/** The hint shown under a process in the participant form. */
export function hintText(t: Translate, hint: ProcessHint): string {
  if (!hintBlocks(hint)) return t('ruleOk');
  return [
    hint.restricted ? t('ruleRestricted') : '',
    hint.requiredIcds.length > 0 ? t('ruleIcd', { icds: hint.requiredIcds.join(', ') }) : '',
    hint.missingDependencies.length > 0 ? t('ruleDependency', { names: hint.missingDependencies.join(', ') }) : '',
  ]
    .filter(Boolean)
    .join(' ');
}
