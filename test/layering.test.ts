import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

/** The layering errors the lint reports for `source` placed at `filePath`. */
async function layeringErrors(filePath: string, source: string): Promise<string[]> {
  const results = await eslint.lintText(source, { filePath });
  return results
    .flatMap((result) => result.messages)
    .filter((message) => message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

describe('the floors of src/ (README, "Code layout")', () => {
  it('fails the lint of a back-up import: the data floor importing the HTTP floor', async () => {
    const errors = await layeringErrors('src/db/probe.ts', "export { callerOf } from '../http/auth.js';\n");
    expect(errors).toEqual([expect.stringContaining('src/db/ may import only core')]);
  });

  it('fails the lint of a resource importing a part built on resources, and of core importing anything', async () => {
    expect(
      await layeringErrors('src/processes/probe.ts', "export type { ChangeFeed } from '../changes/routes.js';\n"),
    ).toHaveLength(1);
    expect(
      await layeringErrors('src/core/probe.ts', "export type { Queryable } from '../db/database.js';\n"),
    ).toHaveLength(1);
  });

  it('fails the lint of the data floor importing the views of held state, and of a resource importing the network', async () => {
    expect(await layeringErrors('src/db/probe.ts', "export { standbyView } from '../held-state.js';\n")).toEqual([
      expect.stringContaining('src/db/ may import only core'),
    ]);
    expect(
      await layeringErrors(
        'src/participants/probe.ts',
        "export type { DeliveryTarget } from '../network/outbox.js';\n",
      ),
    ).toHaveLength(1);
  });

  it('fails the lint of the change log importing the network: two parts built on resources, neither needing the other', async () => {
    expect(
      await layeringErrors('src/changes/probe.ts', "export { deliveryStatus } from '../network/delivery-status.js';\n"),
    ).toHaveLength(1);
    expect(
      await layeringErrors('src/network/probe.ts', "export { auditRoutes } from '../changes/routes.js';\n"),
    ).toHaveLength(1);
  });

  it('holds a folder within a floor (http/early-answers/) to its floor: its `../` stays on it, its `../../` leaves it', async () => {
    expect(
      await layeringErrors(
        'src/http/early-answers/probe.ts',
        "export type { RequestRecorder } from '../../operations/metrics.js';\n",
      ),
    ).toEqual([expect.stringContaining('src/http/ may import only core, db')]);
    const source =
      "export { SECURITY_HEADERS } from '../security-headers.js';\nexport type { Queryable } from '../../db/database.js';\n";
    expect(await layeringErrors('src/http/early-answers/probe.ts', source)).toEqual([]);
  });

  it('fails the lint of a cached resource importing the catalogue cache, which imports it (a circle)', async () => {
    const errors = await layeringErrors(
      'src/processes/probe.ts',
      "export type { CatalogueCache } from '../catalogue-cache/catalogue-cache.js';\n",
    );
    expect(errors).toEqual([expect.stringContaining('src/processes/ may import only core, db, http')]);
  });

  it('holds sessions and sign-in locks to resource floors of their own: users import them, never the other way', async () => {
    const users =
      "export { closeSessionsOf } from '../sessions/sessions.js';\n" +
      "export { storeLock } from '../sign-in-locks/sign-in-locks.js';\n";
    expect(await layeringErrors('src/users/probe.ts', users)).toEqual([]);
    expect(
      await layeringErrors('src/sessions/probe.ts', "export { findCredentials } from '../users/repository.js';\n"),
    ).toEqual([expect.stringContaining('src/sessions/ may import only core, db, http')]);
    expect(
      await layeringErrors(
        'src/sign-in-locks/probe.ts',
        "export { credentialVerifier } from '../users/credentials.js';\n",
      ),
    ).toEqual([expect.stringContaining('src/sign-in-locks/ may import only core, db, http')]);
    expect(
      await layeringErrors('src/sessions/probe.ts', "export { storeLock } from '../sign-in-locks/sign-in-locks.js';\n"),
    ).toHaveLength(1);
  });

  it('fails the lint of src/ importing dev/, from its top and from a folder', async () => {
    const source = "export { startLocalSml } from '../dev/local-sml.js';\n";
    expect(await layeringErrors('src/app.ts', source)).toEqual([expect.stringContaining('src/ never imports dev/')]);
    expect(await layeringErrors('src/server.ts', source)).toEqual([expect.stringContaining('src/ never imports dev/')]);
    expect(
      await layeringErrors('src/changes/probe.ts', "export { startLocalSml } from '../../dev/local-sml.js';\n"),
    ).toHaveLength(1);
  });

  it('passes the imports down the floors and the sideways imports it lists', async () => {
    const source =
      "export type { Queryable } from '../db/database.js';\nexport { callerOf } from '../http/auth.js';\n" +
      "export type { Process } from '../processes/schemas.js';\n";
    expect(await layeringErrors('src/document-types/probe.ts', source)).toEqual([]);
    const network =
      "export type { ChangeSignal } from '../db/change-signal.js';\nexport { scopeOf } from '../participants/routes.js';\n";
    expect(await layeringErrors('src/network/probe.ts', network)).toEqual([]);
  });
});

/** Every module of src/ with the modules of src/ it imports (type-only imports too: a type is a dependency). */
function importsOfSrc(): Map<string, string[]> {
  const files = readdirSync('src', { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => join('src', file));
  return new Map(
    files.map((file) => [
      file,
      ts
        .preProcessFile(readFileSync(file, 'utf8'), true, true)
        .importedFiles.map(({ fileName }) => fileName)
        .filter((name) => name.startsWith('.'))
        .map((name) => relative('.', resolve(dirname(file), name.replace(/\.js$/, '.ts')))),
    ]),
  );
}

/** The import circles among `imports`: Tarjan's strongly connected components of more than one module, or of one importing itself. */
function circles(imports: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    for (const next of imports.get(file) ?? []) {
      if (!imports.has(next)) continue;
      if (!index.has(next)) visit(next);
      if (stack.includes(next)) low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = stack.splice(stack.indexOf(file));
    if (component.length > 1 || imports.get(file)?.includes(file)) found.push(component);
  };
  for (const file of imports.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('the imports of src/', () => {
  it('form no circle, within a folder as between floors', () => {
    expect(circles(importsOfSrc())).toEqual([]);
  });

  it('would show a circle: the finder reports two modules importing each other', () => {
    expect(
      circles(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['a.ts']],
          ['c.ts', ['a.ts']],
        ]),
      ),
    ).toEqual([['a.ts', 'b.ts']]);
  });
});
