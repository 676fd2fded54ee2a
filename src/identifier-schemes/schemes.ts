/**
 * The accepted ICDs (docs/spec/DECISIONS.md, "Identifiers"): with the Peppol "Participant Identifier Schemes" code
 * list loaded, its schemes not past their removal date; without one, the specification's list, exactly.
 */
import { ICDS } from '../core/schemas.js';

export type SchemeState = 'active' | 'deprecated' | 'removed';

/** One entry of the Participant Identifier Schemes code list, as loaded and stored. */
export interface IdentifierScheme {
  icd: string;
  /** The list's `schemeid`, such as `NO:ORG`. */
  schemeId: string | null;
  schemeName: string;
  country: string | null;
  issuingAgency: string | null;
  state: SchemeState;
  /** `YYYY-MM-DD`: from the UTC start of this day no new participant takes the ICD. */
  removalDate: string | null;
  /** The list's `registrable` flag, kept as the list says it (the accepted set does not follow it: DECISIONS.md does not). */
  registrable: boolean;
  structure: string | null;
  /** The list's `validation-rules` text as published (`RegEx: ...`, `Check digits: ...`), for the value checks. */
  validationRules: string | null;
  examples: string[];
}

/** What the accepted set says of an ICD for a new participant: taken (perhaps with a warning the client sees), or refused. */
export type IcdVerdict =
  { accepted: true; warning?: string } | { accepted: false; code: 'Icd' | 'IcdRemoved'; reason: string };

const SPECIFICATION_ICDS: ReadonlySet<string> = new Set(ICDS);

/** The instant a removal date takes effect: the UTC start of its day. */
const removalInstant = (date: string) => Date.parse(`${date}T00:00:00Z`);

/**
 * The identifier schemes as loaded at one moment, asked at request time: every date is compared with the `now` of the
 * question, so a removal takes effect at its instant on every instance, without a load or a restart.
 */
export class IdentifierSchemeList {
  private readonly byIcd: ReadonlyMap<string, IdentifierScheme>;

  constructor(schemes: readonly IdentifierScheme[]) {
    this.byIcd = new Map(schemes.map((scheme) => [scheme.icd, scheme]));
  }

  /** Every scheme of the loaded list, by ICD (none before a list is loaded). */
  all(): IdentifierScheme[] {
    return [...this.byIcd.values()].sort((a, b) => a.icd.localeCompare(b.icd));
  }

  /** Whether a code list is loaded; without one the specification's ICDs stand. */
  get loaded(): boolean {
    return this.byIcd.size > 0;
  }

  /** What the loaded list says of `icd` (state, removal date, validation rules text); undefined when it does not name it. */
  scheme(icd: string): IdentifierScheme | undefined {
    return this.byIcd.get(icd);
  }

  /** An ICD the registry knows at all (accepted, deprecated or removed): what searches and process rules may name. */
  isKnown(icd: string): boolean {
    return this.loaded ? this.byIcd.has(icd) : SPECIFICATION_ICDS.has(icd);
  }

  /** Whether `icd` was removed by `now`: past its removal date, or marked removed with none. */
  isRemoved(icd: string, now: Date = new Date()): boolean {
    const scheme = this.byIcd.get(icd);
    if (!scheme) return false;
    if (scheme.removalDate === null) return scheme.state === 'removed';
    return now.getTime() >= removalInstant(scheme.removalDate);
  }

  /** The ICDs removed by `now`, in order: those whose participants are listed for their end. */
  removedIcds(now: Date = new Date()): string[] {
    return [...this.byIcd.keys()].filter((icd) => this.isRemoved(icd, now)).sort();
  }

  /** Why `icd` is not known, in plain words. */
  unknownReason(icd: string): string {
    return this.loaded
      ? `ICD ${icd} is not in the Peppol participant identifier schemes code list`
      : `ICD ${icd} is not one of the ICDs of the specification (no Peppol code list is loaded)`;
  }

  /** Whether a new participant may take `icd` at `now`, in the words its refusal or warning gives. */
  forNewParticipant(icd: string, now: Date = new Date()): IcdVerdict {
    const scheme = this.byIcd.get(icd);
    if (!this.isKnown(icd)) return { accepted: false, code: 'Icd', reason: this.unknownReason(icd) };
    if (!scheme) return { accepted: true };
    if (this.isRemoved(icd, now)) {
      const on = scheme.removalDate === null ? '' : ` on ${scheme.removalDate}`;
      return {
        accepted: false,
        code: 'IcdRemoved',
        reason: `ICD ${icd} was removed from the Peppol code list${on}: no new participants`,
      };
    }
    if (scheme.state === 'active' && scheme.removalDate === null) return { accepted: true };
    const until =
      scheme.removalDate === null
        ? ''
        : ` and will be removed on ${scheme.removalDate}, from when it takes no new participants`;
    const standing = scheme.state === 'active' ? 'is to be removed from' : `is ${scheme.state} in`;
    return { accepted: true, warning: `ICD ${icd} ${standing} the Peppol code list${until}` };
  }
}
