import { expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import type { LocalDirectory } from '../../dev/local-directory.js';
import type { LocalSml } from '../../dev/local-sml.js';
import type { TestApp } from '../helpers/app.js';
import { asAdmin, expectStatus } from '../helpers/administration.js';
import { addDocumentType, addProcess, documentTypeForm } from '../helpers/catalogue.js';
import { SMP_ID, useDeliveryTestApp } from '../helpers/delivery.js';
import { addParticipant, byQualified } from '../helpers/participants.js';

let t: TestApp;
let sml: LocalSml;
let directory: LocalDirectory;
let app: App;
useDeliveryTestApp((started) => ({ t, sml, directory, app } = started));

const held = () => sml.registrations.get(SMP_ID) ?? new Set<string>();

it('deletes an organization from the SML and the Directory at the instant its last publishable document type is removed, once, and keeps its record', async () => {
  const removed = await addDocumentType(t.app, t.users.authority);
  const staying = await addDocumentType(t.app, t.users.authority);
  const onlyRemoved = await addProcess(t.app, t.users.authority, {
    documentTypes: [{ identifier: removed.identifier }],
  });
  const both = await addProcess(t.app, t.users.authority, {
    documentTypes: [{ identifier: removed.identifier }, { identifier: staying.identifier }],
  });
  const losing = await addParticipant(app, t.users.serviceProvider, {
    processes: [{ identifier: onlyRemoved.identifier }],
  });
  const keeping = await addParticipant(app, t.users.serviceProvider, { processes: [{ identifier: both.identifier }] });
  await vi.waitFor(
    () => {
      expect(held()).toContain(losing.qualifiedIdentifier);
      expect(held()).toContain(keeping.qualifiedIdentifier);
      expect(directory.indexed.has(losing.qualifiedIdentifier)).toBe(true);
    },
    { timeout: 15_000, interval: 50 },
  );

  const removedFrom = new Date(Math.ceil((Date.now() + 3000) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  expectStatus(
    await asAdmin(t).send(
      'PUT',
      `/rest/api/document-types/${removed.identifier}`,
      documentTypeForm({
        qualifiedIdentifier: removed.qualifiedIdentifier,
        processes: [{ identifier: onlyRemoved.identifier }, { identifier: both.identifier }],
        removedFrom,
      }),
      t.users.authority,
    ),
    200,
  );
  await vi.waitFor(
    () => {
      expect(held()).not.toContain(losing.qualifiedIdentifier);
      expect(directory.indexed.has(losing.qualifiedIdentifier)).toBe(false);
    },
    { timeout: 20_000, interval: 100 },
  );
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(removedFrom));
  expect(held()).toContain(keeping.qualifiedIdentifier);

  // Both instances watched the instant; the organizations that lost something were announced once.
  const logged = await t.db.query<{ identifier: string }>(
    `SELECT identifier FROM change_log WHERE operation = 'withdraw' ORDER BY identifier`,
  );
  expect(logged.map((entry) => entry.identifier)).toEqual(
    [losing.qualifiedIdentifier, keeping.qualifiedIdentifier].sort(),
  );
  const record = expectStatus(
    await t.app.inject({
      url: byQualified(losing.qualifiedIdentifier),
      headers: { authorization: t.users.serviceProvider.authorization },
    }),
    200,
  );
  expect(record.processes[0].documentTypes).toEqual([
    expect.objectContaining({ identifier: removed.identifier, removedFrom }),
  ]);
}, 60_000);
