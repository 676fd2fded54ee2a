import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';

/** The official participant identifier scheme code list (the project's copy), for the country of each ICD. */
const PARTICIPANT_SCHEMES_FILE = join(
  import.meta.dirname,
  '..',
  '..',
  'reference-data',
  'peppol-codelists-v9.7',
  'participant-identifier-schemes.xml',
);

/** ICD → ISO 3166 country code (`international` entries are kept as the list writes them). */
export async function readIcdCountries(path = PARTICIPANT_SCHEMES_FILE): Promise<Map<string, string>> {
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    isArray: (name) => name === 'participant-identifier-scheme',
  });
  const document: {
    'participant-identifier-schemes'?: { 'participant-identifier-scheme'?: Array<Record<string, string | undefined>> };
  } = parser.parse(await readFile(path, 'utf8'));
  const schemes = document['participant-identifier-schemes']?.['participant-identifier-scheme'] ?? [];
  return new Map(
    schemes.flatMap(({ '@iso6523': icd, '@country': country }): Array<[string, string]> =>
      icd && country ? [[icd, country]] : [],
    ),
  );
}
