import { describe, expect, it } from 'vitest';
import { hrefSegment, serviceGroupXml } from '../../src/smp/xml.js';
import { readByXpath, validateAgainstSmpSchema } from '../helpers/smp.js';

describe('the service group as written', () => {
  it('is valid, and libxml2 reads back every value as given, markup characters included', async () => {
    const participant = { scheme: 'iso6523-actorid-upis', value: `0192:a&b<c>"d'e` };
    const documentTypes = [
      { scheme: 'busdox-docid-qns', value: `urn:x'&<>"#1` },
      { scheme: 'busdox-docid-qns', value: 'urn:y' },
    ];
    const base = `https://smp.example/a&b'c`;
    const xml = serviceGroupXml(participant, documentTypes.map(hrefSegment), base);

    const valid = await validateAgainstSmpSchema(xml);
    expect(valid.ok, valid.output).toBe(true);
    expect(await readByXpath(xml, 'string(//*[local-name()="ParticipantIdentifier"])')).toBe(participant.value);
    expect(await readByXpath(xml, 'string(//*[local-name()="ParticipantIdentifier"]/@scheme)')).toBe(
      participant.scheme,
    );
    const participantPath = `${base}/${encodeURIComponent(`${participant.scheme}::${participant.value}`)}/services/`;
    for (const [index, documentType] of documentTypes.entries()) {
      expect(await readByXpath(xml, `string(//*[local-name()="ServiceMetadataReference"][${index + 1}]/@href)`)).toBe(
        participantPath + encodeURIComponent(`${documentType.scheme}::${documentType.value}`),
      );
    }
  });

  it('is valid with no reference', async () => {
    const valid = await validateAgainstSmpSchema(
      serviceGroupXml({ scheme: 'iso6523-actorid-upis', value: '0192:100000008' }, [], 'https://smp.example'),
    );
    expect(valid.ok, valid.output).toBe(true);
  });
});
