import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

/** The layering errors the lint reports for `source` placed at `filePath`. */
async function layeringErrors(filePath: string, source: string): Promise<string[]> {
  const results = await eslint.lintText(source, { filePath });
  return results.flatMap((result) => result.messages).filter((message) => message.ruleId === 'no-restricted-imports').map((message) => message.message);
}

describe('the floors of src/ (README, "Code layout")', () => {
  it('fails the lint of a back-up import: the data floor importing the HTTP floor', async () => {
    const errors = await layeringErrors('src/db/probe.ts', "export { callerOf } from '../http/auth.js';\n");
    expect(errors).toEqual([expect.stringContaining('src/db/ may import only core')]);
  });

  it('fails the lint of a resource importing a part built on resources, and of core importing anything', async () => {
    expect(await layeringErrors('src/processes/probe.ts', "export type { ChangeFeed } from '../changes/routes.js';\n")).toHaveLength(1);
    expect(await layeringErrors('src/core/probe.ts', "export type { Queryable } from '../db/database.js';\n")).toHaveLength(1);
  });

  it('fails the lint of a cached resource importing the catalogue cache, which imports it (a circle)', async () => {
    const errors = await layeringErrors('src/processes/probe.ts', "export type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';\n");
    expect(errors).toEqual([expect.stringContaining('src/processes/ may import only core, db, http')]);
  });

  it('fails the lint of src/ importing dev/, from its top and from a folder', async () => {
    const source = "export { startLocalSml } from '../dev/local-sml.js';\n";
    expect(await layeringErrors('src/app.ts', source)).toEqual([expect.stringContaining('src/ never imports dev/')]);
    expect(await layeringErrors('src/server.ts', source)).toEqual([expect.stringContaining('src/ never imports dev/')]);
    expect(await layeringErrors('src/changes/probe.ts', "export { startLocalSml } from '../../dev/local-sml.js';\n")).toHaveLength(1);
  });

  it('passes the imports down the floors and the sideways imports it lists', async () => {
    const source = "export type { Queryable } from '../db/database.js';\nexport { callerOf } from '../http/auth.js';\n"
      + "export type { Process } from '../processes/schemas.js';\n";
    expect(await layeringErrors('src/document-types/probe.ts', source)).toEqual([]);
  });
});
