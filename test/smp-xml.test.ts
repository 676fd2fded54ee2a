import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { hrefSegment, serviceGroupXml } from '../src/smp/xml.js';
import { validateAgainstSmpSchema } from './helpers/smp.js';

/** What libxml2 reads at `xpath` of `xml` (without the line feed xmllint ends it with). */
async function readBack(xml: string, xpath: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'smp-xml-'));
  try {
    await writeFile(join(dir, 'group.xml'), xml);
    const { stdout } = await promisify(execFile)('xmllint', ['--xpath', xpath, join(dir, 'group.xml')]);
    return stdout.replace(/\n$/, '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the service group as written', () => {
  it('is valid, and libxml2 reads back every value as given, markup characters included', async () => {
    const participant = { scheme: 'iso6523-actorid-upis', value: `0192:a&b<c>"d'e` };
    const documentTypes = [{ scheme: 'busdox-docid-qns', value: `urn:x'&<>"#1` }, { scheme: 'busdox-docid-qns', value: 'urn:y' }];
    const base = `https://smp.example/a&b'c`;
    const xml = serviceGroupXml(participant, documentTypes.map(hrefSegment), base);

    const valid = await validateAgainstSmpSchema(xml);
    expect(valid.ok, valid.output).toBe(true);
    expect(await readBack(xml, 'string(//*[local-name()="ParticipantIdentifier"])')).toBe(participant.value);
    expect(await readBack(xml, 'string(//*[local-name()="ParticipantIdentifier"]/@scheme)')).toBe(participant.scheme);
    const participantPath = `${base}/${encodeURIComponent(`${participant.scheme}::${participant.value}`)}/services/`;
    for (const [index, documentType] of documentTypes.entries()) {
      expect(await readBack(xml, `string(//*[local-name()="ServiceMetadataReference"][${index + 1}]/@href)`))
        .toBe(participantPath + encodeURIComponent(`${documentType.scheme}::${documentType.value}`));
    }
  });

  it('is valid with no reference', async () => {
    const valid = await validateAgainstSmpSchema(serviceGroupXml({ scheme: 'iso6523-actorid-upis', value: '0192:1' }, [], 'https://smp.example'));
    expect(valid.ok, valid.output).toBe(true);
  });
});
