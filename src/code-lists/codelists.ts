import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import {
  ENTRY_STATES,
  mergeCatalogues,
  emptyCatalogue,
  type Catalogue,
  type EntryLife,
  type EntryState,
} from './catalogue.js';
import type { QualifiedIdentifier } from '../core/schemas.js';
import type { IdentifierScheme } from '../identifier-schemes/schemes.js';

/** A code-list file that cannot be read as one: the message names the file and the entry. */
export class CodeListError extends Error {}

type Attributes = Record<string, unknown>;

const isAttributes = (value: unknown): value is Attributes => typeof value === 'object' && value !== null;

/** The elements named in the parser's `isArray`, which it always reads as arrays (none: absent). */
const elementsOf = (value: unknown): Attributes[] => (Array.isArray(value) ? value : []);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  isArray: (name) =>
    ['process', 'document-type', 'process-id', 'transport-profile', 'participant-identifier-scheme'].includes(name),
  // The schemes' texts (structure, validation rules, examples) are kept as published: `2120000787` is no number.
  parseTagValue: false,
});

const LIST_ROOTS = ['processes', 'document-types', 'transport-profiles', 'participant-identifier-schemes'] as const;

/**
 * Reads the official Peppol code lists in their published XML form (`processes.xml`, `document-types.xml`,
 * `transport-profiles.xml`, `participant-identifier-schemes.xml`, any file name). A directory contributes every
 * code list it holds; other XML files there are listed in `skipped`.
 */
export async function readCodeLists(paths: readonly string[]): Promise<{ catalogue: Catalogue; skipped: string[] }> {
  const parts: Catalogue[] = [];
  const skipped: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => {
      throw new CodeListError(`${path}: no such file or directory`);
    });
    if (!info.isDirectory()) {
      const part = await readCodeListFile(path);
      if (!part)
        throw new CodeListError(
          `${path}: not a Peppol processes, document types, transport profiles or participant identifier schemes code list`,
        );
      parts.push(part);
      continue;
    }
    const names = (await readdir(path)).filter((name) => name.toLowerCase().endsWith('.xml')).sort();
    for (const name of names) {
      const part = await readCodeListFile(join(path, name));
      if (part) parts.push(part);
      else skipped.push(join(path, name));
    }
  }
  return { catalogue: mergeCatalogues(parts), skipped };
}

/** The code list in the file at `path`; undefined when it is XML but not a code list. */
async function readCodeListFile(path: string): Promise<Catalogue | undefined> {
  let document: Attributes;
  try {
    document = parser.parse(await readFile(path, 'utf8'), true);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CodeListError(`${path}: not a readable XML file (${message.split('\n')[0]})`);
  }
  for (const root of LIST_ROOTS) {
    const list = document[root];
    if (isAttributes(list)) return parseCodeList(root, list, basename(path));
  }
  return undefined;
}

/** One parsed code list, by its root element. */
function parseCodeList(root: (typeof LIST_ROOTS)[number], list: Attributes, file: string): Catalogue {
  const catalogue = emptyCatalogue();
  catalogue.sources.push({ list: root, version: text(list, 'version', file) });
  const entries = (name: string) => elementsOf(list[name]);
  const at = (name: string, index: number) => `${file}: ${name} #${index + 1}`;
  if (root === 'processes') {
    catalogue.processes = entries('process').map((entry, index) => ({
      ...key(entry, at('process', index)),
      ...life(entry, at('process', index)),
    }));
  } else if (root === 'document-types') {
    catalogue.documentTypes = entries('document-type').map((entry, index) => {
      const where = at('document-type', index);
      return {
        ...key(entry, where),
        ...life(entry, where),
        title: text(entry, 'name', where),
        domainCommunity: typeof entry['domain-community'] === 'string' ? entry['domain-community'] : null,
        processes: elementsOf(entry['process-id']).map((link) => key(link, `${where} process-id`)),
      };
    });
  } else if (root === 'participant-identifier-schemes') {
    catalogue.identifierSchemes = entries('participant-identifier-scheme').map((entry, index) =>
      identifierSchemeOf(entry, at('participant-identifier-scheme', index)),
    );
  } else {
    catalogue.transportProfiles = entries('transport-profile').map((entry, index) => {
      const where = at('transport-profile', index);
      return {
        value: text(entry, 'profile-id', where),
        title: `Peppol ${text(entry, 'protocol', where)} v${text(entry, 'profile-version', where)}`,
        state: state(entry, where),
      };
    });
  }
  return catalogue;
}

const ICD = /^[0-9]{4}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** One scheme of the participant identifier schemes list, with its texts as published. */
function identifierSchemeOf(entry: Attributes, where: string): IdentifierScheme {
  const icd = text(entry, 'iso6523', where);
  if (!ICD.test(icd)) throw new CodeListError(`${where}: iso6523 '${icd}' is not four digits`);
  const removalDate = optionalText(entry, 'removal-date');
  if (removalDate !== null && (!DATE.test(removalDate) || Number.isNaN(Date.parse(removalDate)))) {
    throw new CodeListError(`${where}: removal-date '${removalDate}' is not a date (YYYY-MM-DD)`);
  }
  return {
    icd,
    schemeId: optionalText(entry, 'schemeid'),
    schemeName: text(entry, 'scheme-name', where),
    country: optionalText(entry, 'country'),
    issuingAgency: optionalText(entry, 'issuing-agency'),
    state: state(entry, where),
    removalDate,
    registrable: optionalText(entry, 'registrable') !== 'false',
    structure: optionalText(entry, 'structure'),
    validationRules: optionalText(entry, 'validation-rules'),
    examples: (optionalText(entry, 'examples') ?? '')
      .split('\n')
      .map((example) => example.trim())
      .filter((example) => example !== ''),
  };
}

/** An attribute or element's text, trimmed; null when absent or empty. */
function optionalText(entry: Attributes, name: string): string | null {
  const value = entry[name];
  const given =
    typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value).trim() : '';
  return given === '' ? null : given;
}

function text(entry: Attributes, name: string, where: string): string {
  const value = entry[name];
  if (typeof value !== 'string' || value.trim() === '')
    throw new CodeListError(`${where}: attribute '${name}' is missing`);
  return value.trim();
}

function key(entry: Attributes, where: string): QualifiedIdentifier {
  return { scheme: text(entry, 'scheme', where), value: text(entry, 'value', where) };
}

/** An xs:date as the lists write their removal dates. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The entry's state and, when the list gives one, the start (UTC) of its removal date. */
function life(entry: Attributes, where: string): EntryLife {
  const removal = entry['removal-date'];
  if (removal === undefined) return { state: state(entry, where) };
  const day = typeof removal === 'string' ? removal.trim() : '';
  const removedFrom = `${day}T00:00:00Z`;
  if (!DAY.test(day) || Number.isNaN(Date.parse(removedFrom))) {
    throw new CodeListError(`${where}: removal-date '${String(removal)}' is not a date (expected YYYY-MM-DD)`);
  }
  return { state: state(entry, where), removedFrom };
}

function state(entry: Attributes, where: string): EntryState {
  const value = text(entry, 'state', where);
  const known = ENTRY_STATES.find((entryState) => entryState === value);
  if (known === undefined)
    throw new CodeListError(`${where}: unknown state '${value}' (expected ${ENTRY_STATES.join(', ')})`);
  return known;
}
