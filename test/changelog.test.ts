import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildManagementServer } from '../src/operations/management.js';
import { buildInfo } from '../src/status/build-info.js';
import { startTestApp } from './helpers/app.js';
import { PROJECT_ROOT } from './helpers/openapi-tools.js';

/**
 * The version an operator reads in an upgrade: package.json's, the newest entry of CHANGELOG.md, which names every
 * migration once, under the version that brings it; the running registry says its version.
 */
describe('the version and its changelog', () => {
  const changelog = () => readFile(join(PROJECT_ROOT, 'CHANGELOG.md'), 'utf8');
  const versions = (text: string) => [...text.matchAll(/^## (\d+\.\d+\.\d+)$/gm)].map((match) => match[1]);

  it('the newest entry is the version of package.json, and the versions go down', async () => {
    const { version } = JSON.parse(await readFile(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
    const listed = versions(await changelog());
    expect(listed[0]).toBe(version);
    const ordered = [...listed].sort((a, b) => b!.localeCompare(a!, undefined, { numeric: true }));
    expect(listed).toEqual(ordered);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('every migration is listed once, each entry says its migrations (or none)', async () => {
    const text = await changelog();
    const migrations = (await readdir(join(PROJECT_ROOT, 'src', 'db', 'migrations'))).filter((file) =>
      file.endsWith('.sql'),
    );
    for (const file of migrations) expect(text.split(`\`${file}\``).length - 1, file).toBe(1);
    const entries = text.split(/^## /m).slice(1);
    for (const entry of entries) expect(entry, entry.split('\n')[0]).toMatch(/^Migrations: none\.$|^Migrations:\n/m);
  });

  it('the liveness answer and the status name the version that runs', async () => {
    const t = await startTestApp();
    const management = buildManagementServer({ db: t.db, metrics: t.app.metrics, version: buildInfo().version });
    try {
      const live = (await management.server.inject({ url: '/health/live' })).json();
      expect(live).toEqual({ status: 'UP', version: buildInfo().version });
      expect(versions(await changelog())[0]).toBe(buildInfo().version);
    } finally {
      await management.server.close();
      await t.close();
    }
  }, 120_000);
});
