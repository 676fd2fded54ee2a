import type { FieldErrorInput } from '../core/errors.js';
import { qualifiedNameOf, type Reference } from '../core/schemas.js';
import type { Process } from '../processes/schemas.js';

type Entry = Omit<FieldErrorInput, 'objectName'>;

export interface ProcessRule {
  id: string;
  /** The qualified identifier. */
  name: string;
  restricted: boolean;
  requiredIcds: string[];
  dependencies: { id: string; name: string }[];
}

/** What the participant rules need to know of a process. */
export const processRuleOf = (process: Process): ProcessRule => ({
  id: process.identifier,
  name: process.qualifiedIdentifier,
  restricted: process.restricted,
  requiredIcds: process.requiredICDs,
  dependencies: process.dependencies.map((dependency) => ({
    id: dependency.identifier,
    name: dependency.qualifiedIdentifier,
  })),
});

/** The rule a reference names: by identifier, else by qualified identifier (as the references were resolved). */
function ruleOf(reference: Reference, rules: readonly ProcessRule[]): ProcessRule | undefined {
  if (reference.identifier) {
    const id = reference.identifier.toLowerCase();
    return rules.find((rule) => rule.id === id);
  }
  const name = qualifiedNameOf(reference);
  return name === undefined ? undefined : rules.find((rule) => rule.name === name);
}

/**
 * The participant rules of docs/spec/DECISIONS.md for the processes a participant newly takes: not restricted, its ICD
 * among the process's required ICDs (when it has any), and every dependency among the participant's processes.
 * Processes it already has are kept as they are. Each violation is reported once, at the first reference.
 */
export function processRuleErrors(
  references: readonly Reference[],
  rules: readonly ProcessRule[],
  icd: string,
  currentIds: readonly string[],
): Entry[] {
  const wanted = new Set(rules.map((rule) => rule.id));
  const checked = new Set<string>(currentIds);
  const errors: Entry[] = [];
  references.forEach((reference, index) => {
    const rule = ruleOf(reference, rules);
    if (!rule || checked.has(rule.id)) return;
    checked.add(rule.id);
    const { name } = rule;
    const entry = (code: string, defaultMessage: string) =>
      errors.push({
        field: `processes[${index}]`,
        code,
        rejectedValue: reference,
        typeName: 'ProcessIdentifiable',
        defaultMessage,
      });
    if (rule.restricted) entry('Restricted', `process '${name}' is restricted (deprecated) and cannot be added`);
    if (rule.requiredIcds.length > 0 && !rule.requiredIcds.includes(icd)) {
      entry(
        'RequiredIcd',
        `process '${name}' requires one of the ICDs ${rule.requiredIcds.join(', ')}; the participant's ICD is ${icd}`,
      );
    }
    const missing = rule.dependencies.filter((dependency) => !wanted.has(dependency.id));
    if (missing.length > 0) {
      entry(
        'MissingDependency',
        `process '${name}' depends on ${missing.map((dependency) => `'${dependency.name}'`).join(', ')}, which the participant does not have`,
      );
    }
  });
  return errors;
}
