import { describe, expect, it } from 'vitest';
import { readCodeLists } from '../../src/code-lists/codelists.js';
import { loadCatalogue } from '../../src/code-lists/repository.js';
import { vendorMediaType } from '../../src/http/media-types.js';
import { useTestApp } from '../helpers/app.js';
import { CODE_LISTS } from '../helpers/code-lists.js';

const t = useTestApp();

describe('GET /rest/api/catalogue/sources: which code-list release the catalogue follows', () => {
  it('answers anyone, with credentials or without, the release of each list and when it was loaded', async () => {
    const before = await t.app.inject({ url: '/rest/api/catalogue/sources' });
    expect(before.statusCode).toBe(200);
    const listsBefore = before.json().map((source: { list: string }) => source.list);

    const loadedFrom = Date.now() - 1000;
    await loadCatalogue(t.db, (await readCodeLists([CODE_LISTS])).catalogue);
    for (const authorization of [undefined, t.users.serviceProvider.authorization, t.users.admin.authorization]) {
      const answer = await t.app.inject({
        url: '/rest/api/catalogue/sources',
        headers: authorization ? { authorization } : {},
      });
      expect(answer.statusCode).toBe(200);
      const sources = answer.json() as Array<{ list: string; version: string; loadedAt: string }>;
      expect(
        sources.filter((source) => source.list !== 'starter').map(({ list, version }) => ({ list, version })),
      ).toEqual([
        { list: 'document-types', version: '9.7' },
        { list: 'participant-identifier-schemes', version: '9.7' },
        { list: 'processes', version: '9.7' },
        { list: 'transport-profiles', version: '9.7' },
      ]);
      expect(sources.map((source) => source.list)).toEqual(expect.arrayContaining(listsBefore));
      for (const source of sources.filter((entry) => entry.list !== 'starter'))
        expect(Date.parse(source.loadedAt)).toBeGreaterThan(loadedFrom);
    }
  });

  it('GET /rest/api/catalogue/identifier-schemes names each ICD of the loaded list, to anyone (what 0192 is)', async () => {
    await loadCatalogue(t.db, (await readCodeLists([CODE_LISTS])).catalogue);
    const schemes = async () =>
      (await t.app.inject({ url: '/rest/api/catalogue/identifier-schemes' })).json() as Array<{ icd: string }>;
    await expect.poll(async () => (await schemes()).length).toBeGreaterThan(100);
    const listed = await schemes();
    expect(listed.find((scheme) => scheme.icd === '0192')).toEqual({
      icd: '0192',
      schemeId: 'NO:ORG',
      schemeName: 'Organisasjonsnummer',
      country: 'NO',
      issuingAgency: 'The Brønnøysund Register Centre',
      state: 'active',
      removalDate: null,
    });
    expect(listed.map((scheme) => scheme.icd)).toEqual([...listed.map((scheme) => scheme.icd)].sort());
  });

  it('speaks its own versioned media type and refuses one it does not', async () => {
    const type = vendorMediaType('catalogue.sources');
    const answer = await t.app.inject({ url: '/rest/api/catalogue/sources', headers: { accept: type } });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toContain(type);
    expect(
      (await t.app.inject({ url: '/rest/api/catalogue/sources', headers: { accept: 'text/csv' } })).statusCode,
    ).toBe(406);
  });
});
