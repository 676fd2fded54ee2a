import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSmpKey, SmpKeyError } from '../src/smp/keys.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { expectErrorBody } from './helpers/assertions.js';
import { testCertificate } from './helpers/certificates.js';
import { testDatabaseKind } from './helpers/database.js';
import { runServerToEnd, startFailure } from './helpers/entry-point.js';

const silent = () => {
  const lines: string[] = [];
  return { lines, info: (line: string) => lines.push(line), warn: (line: string) => lines.push(line) };
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'smp-keys-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('the SMP signing key', () => {
  it('generates a development key once in the data directory and says it is not a Peppol certificate', async () => {
    const log = silent();
    const first = await loadSmpKey({ REGISTRY_DATA_DIR: join(dir, 'data') }, log);
    expect(first?.development).toBe(true);
    expect(log.lines.join()).toMatch(/NOT a Peppol SMP certificate/);
    expect((await readdir(join(dir, 'data'))).sort()).toEqual(['smp-development-certificate.pem', 'smp-development-key.pem']);
    const second = await loadSmpKey({ REGISTRY_DATA_DIR: join(dir, 'data') }, silent());
    expect(second?.certificatePem).toBe(first?.certificatePem);
  });

  it('has none on a PostgreSQL server without configured files, and says how to configure one', async () => {
    const log = silent();
    expect(await loadSmpKey({ DATABASE_URL: 'postgres://x', REGISTRY_DATA_DIR: dir }, log)).toBeUndefined();
    expect(log.lines.join()).toMatch(/REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE/);
  });

  it('reads configured files, and refuses a key that does not belong to the certificate', async () => {
    const [one, two] = [await testCertificate('one.example'), await testCertificate('two.example')];
    await writeFile(join(dir, 'key.pem'), one.key);
    await writeFile(join(dir, 'cert.pem'), one.cert);
    await writeFile(join(dir, 'other.pem'), two.cert);
    const settings = { DATABASE_URL: 'postgres://x', REGISTRY_DATA_DIR: dir, REGISTRY_SMP_KEY_FILE: join(dir, 'key.pem') };
    const key = await loadSmpKey({ ...settings, REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'cert.pem') }, silent());
    expect(key?.development).toBe(false);
    await expect(loadSmpKey({ ...settings, REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'other.pem') }, silent())).rejects.toThrow(SmpKeyError);
    await expect(loadSmpKey(settings, silent())).rejects.toThrow(/both/);
  });
});

// The check runs before the database matters: once, on the embedded database.
describe.runIf(testDatabaseKind === 'embedded')('a server whose SMP key file cannot be read', () => {
  it('stops at start with one line that names the setting and the file, and no stack trace', async () => {
    const missing = join(dir, 'no-such-key.pem');
    await writeFile(join(dir, 'present-cert.pem'), (await testCertificate('present.example')).cert);
    const finished = await runServerToEnd({
      REGISTRY_DATA_DIR: join(dir, 'server-data'),
      REGISTRY_SMP_KEY_FILE: missing,
      REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'present-cert.pem'),
    });
    expect(startFailure(finished).msg).toBe(`SMP key: REGISTRY_SMP_KEY_FILE names ${missing}, which cannot be read (ENOENT)`);
  });
});

describe('a service without a signing key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers the publication with 503 in the common error body, and the REST API still runs', async () => {
    const participant = encodeURIComponent('iso6523-actorid-upis::0192:987654321');
    expectErrorBody(await t.app.inject(`/${participant}`), 503, /REGISTRY_SMP_KEY_FILE/);
    expectErrorBody(await t.app.inject(`/${participant}/services/${encodeURIComponent('busdox-docid-qns::urn:x')}`), 503);
    const api = await t.app.inject({ url: '/rest/api/processes', headers: { authorization: t.users.admin.authorization } });
    expect(api.statusCode).toBe(200);
  });
});
