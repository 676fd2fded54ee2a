import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import {
  ENTRY_STATES, mergeCatalogues, emptyCatalogue, type Catalogue, type EntryState,
} from './catalogue.js';
import type { QualifiedIdentifier } from '../core/schemas.js';

/** A code-list file that cannot be read as one: the message names the file and the entry. */
export class CodeListError extends Error {}

type Attributes = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseAttributeValue: false,
  isArray: (name) => ['process', 'document-type', 'process-id', 'transport-profile'].includes(name),
});

const LIST_ROOTS = ['processes', 'document-types', 'transport-profiles'] as const;

/**
 * Reads the official Peppol code lists in their published XML form (`processes.xml`, `document-types.xml`,
 * `transport-profiles.xml`, any file name). A directory contributes every code list it holds; other XML
 * files there (such as the participant identifier schemes) are listed in `skipped`.
 */
export async function readCodeLists(paths: readonly string[]): Promise<{ catalogue: Catalogue; skipped: string[] }> {
  const parts: Catalogue[] = [];
  const skipped: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => {
      throw new CodeListError(`${path}: no such file or directory`);
    });
    if (!info.isDirectory()) {
      parts.push(await readCodeListFile(path, true) as Catalogue);
      continue;
    }
    const names = (await readdir(path)).filter((name) => name.toLowerCase().endsWith('.xml')).sort();
    for (const name of names) {
      const part = await readCodeListFile(join(path, name), false);
      if (part) parts.push(part);
      else skipped.push(join(path, name));
    }
  }
  return { catalogue: mergeCatalogues(parts), skipped };
}

async function readCodeListFile(path: string, required: boolean): Promise<Catalogue | undefined> {
  let document: Record<string, unknown>;
  try {
    document = parser.parse(await readFile(path, 'utf8'), true) as Record<string, unknown>;
  } catch (error) {
    throw new CodeListError(`${path}: not a readable XML file (${(error as Error).message.split('\n')[0]})`);
  }
  const root = LIST_ROOTS.find((name) => typeof document[name] === 'object' && document[name] !== null);
  if (!root) {
    if (!required) return undefined;
    throw new CodeListError(`${path}: not a Peppol processes, document types or transport profiles code list`);
  }
  return parseCodeList(root, document[root] as Attributes, basename(path));
}

/** One parsed code list, by its root element. */
function parseCodeList(root: (typeof LIST_ROOTS)[number], list: Attributes, file: string): Catalogue {
  const catalogue = emptyCatalogue();
  catalogue.sources.push({ list: root, version: text(list, 'version', file) });
  const entries = (name: string) => (list[name] as Attributes[] | undefined) ?? [];
  const at = (name: string, index: number) => `${file}: ${name} #${index + 1}`;
  if (root === 'processes') {
    catalogue.processes = entries('process').map((entry, index) => ({
      ...key(entry, at('process', index)),
      state: state(entry, at('process', index)),
    }));
  } else if (root === 'document-types') {
    catalogue.documentTypes = entries('document-type').map((entry, index) => {
      const where = at('document-type', index);
      return {
        ...key(entry, where),
        state: state(entry, where),
        title: text(entry, 'name', where),
        domainCommunity: typeof entry['domain-community'] === 'string' ? entry['domain-community'] : null,
        processes: ((entry['process-id'] as Attributes[] | undefined) ?? []).map((link) => key(link, `${where} process-id`)),
      };
    });
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

function text(entry: Attributes, name: string, where: string): string {
  const value = entry[name];
  if (typeof value !== 'string' || value.trim() === '') throw new CodeListError(`${where}: attribute '${name}' is missing`);
  return value.trim();
}

function key(entry: Attributes, where: string): QualifiedIdentifier {
  return { scheme: text(entry, 'scheme', where), value: text(entry, 'value', where) };
}

function state(entry: Attributes, where: string): EntryState {
  const value = text(entry, 'state', where);
  if (!ENTRY_STATES.includes(value as EntryState)) {
    throw new CodeListError(`${where}: unknown state '${value}' (expected ${ENTRY_STATES.join(', ')})`);
  }
  return value as EntryState;
}
