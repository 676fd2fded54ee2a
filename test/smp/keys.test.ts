import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientTls } from '../../src/network/client-tls.js';
import { KeyFileError } from '../../src/core/private-key-file.js';
import { loadSmpKey, loadSmpKeys, SmpKeyError } from '../../src/smp/keys.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectErrorBody } from '../helpers/assertions.js';
import { testCertificate } from '../helpers/certificates.js';
import { testDatabaseKind } from '../helpers/database.js';
import { runServerToEnd, startFailure } from '../helpers/entry-point.js';

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
    expect((await readdir(join(dir, 'data'))).sort()).toEqual([
      'smp-development-certificate.pem',
      'smp-development-key.pem',
    ]);
    const second = await loadSmpKey({ REGISTRY_DATA_DIR: join(dir, 'data') }, silent());
    expect(second?.certificatePem).toBe(first?.certificatePem);
  });

  it("keeps the development key its owner's only, also one left readable by others", async () => {
    const key = join(dir, 'data', 'smp-development-key.pem');
    await loadSmpKey({ REGISTRY_DATA_DIR: join(dir, 'data') }, silent());
    expect((await stat(key)).mode & 0o777).toBe(0o600);
    await chmod(key, 0o644);
    await loadSmpKey({ REGISTRY_DATA_DIR: join(dir, 'data') }, silent());
    expect((await stat(key)).mode & 0o777).toBe(0o600);
  });

  it('has none on a PostgreSQL server without configured files, and says how to configure one', async () => {
    const log = silent();
    expect(await loadSmpKey({ DATABASE_URL: 'postgres://x', REGISTRY_DATA_DIR: dir }, log)).toBeUndefined();
    expect(log.lines.join()).toMatch(/REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE/);
  });

  it('reads configured files, and refuses a key that does not belong to the certificate', async () => {
    const [one, two] = [await testCertificate('one.example'), await testCertificate('two.example')];
    await writeFile(join(dir, 'key.pem'), one.key, { mode: 0o600 });
    await writeFile(join(dir, 'cert.pem'), one.cert);
    await writeFile(join(dir, 'other.pem'), two.cert);
    const settings = {
      DATABASE_URL: 'postgres://x',
      REGISTRY_DATA_DIR: dir,
      REGISTRY_SMP_KEY_FILE: join(dir, 'key.pem'),
    };
    const key = await loadSmpKey({ ...settings, REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'cert.pem') }, silent());
    expect(key?.development).toBe(false);
    await expect(
      loadSmpKey({ ...settings, REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'other.pem') }, silent()),
    ).rejects.toThrow(SmpKeyError);
    await expect(loadSmpKey(settings, silent())).rejects.toThrow(/both/);
  });

  it('names the certificate it signs with, as an operator compares it with what the CA issued', async () => {
    const pair = await testCertificate('named.example');
    await writeFile(join(dir, 'named-key.pem'), pair.key, { mode: 0o600 });
    await writeFile(join(dir, 'named-cert.pem'), pair.cert);
    const log = silent();
    await loadSmpKey(
      {
        DATABASE_URL: 'postgres://x',
        REGISTRY_DATA_DIR: dir,
        REGISTRY_SMP_KEY_FILE: join(dir, 'named-key.pem'),
        REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'named-cert.pem'),
      },
      log,
    );
    expect(log.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^SMP signing with ${join(dir, 'named-cert.pem')} \\(subject CN=named\\.example.*, serial [0-9A-F]+, valid until \\d{4}-`,
        ),
      ),
    ]);
  });

  it('says a key and certificate given the wrong way round look swapped, not that the certificate needs chmod 600', async () => {
    const pair = await testCertificate('swapped.example');
    const [keyAsCertificate, certificateAsKey] = [join(dir, 'swapped-cert.pem'), join(dir, 'swapped-key.pem')];
    await writeFile(keyAsCertificate, pair.key, { mode: 0o600 });
    await writeFile(certificateAsKey, pair.cert, { mode: 0o644 });
    const settings = {
      DATABASE_URL: 'postgres://x',
      REGISTRY_DATA_DIR: dir,
      REGISTRY_SMP_KEY_FILE: certificateAsKey,
      REGISTRY_SMP_CERTIFICATE_FILE: keyAsCertificate,
    };
    await expect(loadSmpKey(settings, silent())).rejects.toThrow(
      new SmpKeyError(
        `SMP key: REGISTRY_SMP_KEY_FILE and REGISTRY_SMP_CERTIFICATE_FILE look swapped: ${certificateAsKey} holds a certificate and ${keyAsCertificate} a private key`,
      ),
    );
    await expect(loadSmpKey({ ...settings, REGISTRY_SMP_KEY_FILE: keyAsCertificate }, silent())).rejects.toThrow(
      `REGISTRY_SMP_CERTIFICATE_FILE names ${keyAsCertificate}, which holds a private key, not a certificate`,
    );
  });
});

describe('private key files readable by others than their owner', () => {
  let pair: { key: string; cert: string };
  const file = (name: string) => join(dir, name);
  beforeAll(async () => {
    pair = await testCertificate('open.example');
    await writeFile(file('open-cert.pem'), pair.cert);
  });

  /** A key file with `mode`, set explicitly (whatever the umask). */
  async function keyFile(name: string, mode: number): Promise<string> {
    await writeFile(file(name), pair.key);
    await chmod(file(name), mode);
    return file(name);
  }
  const refusal = (setting: string, path: string, mode: string) =>
    `${setting} names ${path}, whose mode ${mode} gives its group or others access: a private key must be its owner's only (chmod 600 ${path})`;

  it('are refused as ssh refuses them, naming the setting, the file and its mode: the current and the next SMP key', async () => {
    const current = await keyFile('group-readable.key', 0o640);
    const settings = {
      DATABASE_URL: 'postgres://x',
      REGISTRY_DATA_DIR: dir,
      REGISTRY_SMP_KEY_FILE: current,
      REGISTRY_SMP_CERTIFICATE_FILE: file('open-cert.pem'),
    };
    await expect(loadSmpKey(settings, silent())).rejects.toThrow(
      new SmpKeyError(`SMP key: ${refusal('REGISTRY_SMP_KEY_FILE', current, '0640')}`),
    );
    await chmod(current, 0o400);
    expect((await loadSmpKey(settings, silent()))?.development).toBe(false);

    const next = await keyFile('others-readable.key', 0o604);
    const withNext = {
      ...settings,
      REGISTRY_SMP_NEXT_KEY_FILE: next,
      REGISTRY_SMP_NEXT_CERTIFICATE_FILE: file('open-cert.pem'),
      REGISTRY_SMP_NEXT_CERTIFICATE_FROM: new Date(Date.now() + 3_600_000).toISOString(),
    };
    await expect(loadSmpKeys(withNext, silent())).rejects.toThrow(
      `next SMP key: ${refusal('REGISTRY_SMP_NEXT_KEY_FILE', next, '0604')}`,
    );
  });

  it('are refused for the SML client too', async () => {
    const key = await keyFile('sml-client.key', 0o660);
    expect(() => clientTls({ clientCertificateFile: file('open-cert.pem'), clientKeyFile: key })).toThrow(
      new KeyFileError(refusal('SML_CLIENT_KEY_FILE', key, '0660')),
    );
  });

  it.runIf(testDatabaseKind === 'embedded')(
    'stop a server at start with that one line, and no stack trace',
    async () => {
      const key = await keyFile('server-sml-client.key', 0o644);
      const finished = await runServerToEnd({
        REGISTRY_DATA_DIR: join(dir, 'open-key-server-data'),
        SML_URL: 'http://127.0.0.1:9',
        SML_SMP_ID: 'test-smp',
        SML_CLIENT_CERT_FILE: file('open-cert.pem'),
        SML_CLIENT_KEY_FILE: key,
      });
      expect(startFailure(finished).msg).toBe(refusal('SML_CLIENT_KEY_FILE', key, '0644'));
    },
  );
});

// The check runs before the database opens: once, on the embedded database.
describe.runIf(testDatabaseKind === 'embedded')('a server whose SMP key file cannot be read', () => {
  it('stops at start with one line that names the setting and the file, and no stack trace, before it makes its database', async () => {
    const missing = join(dir, 'no-such-key.pem');
    await writeFile(join(dir, 'present-cert.pem'), (await testCertificate('present.example')).cert);
    const finished = await runServerToEnd({
      REGISTRY_DATA_DIR: join(dir, 'server-data'),
      REGISTRY_SMP_KEY_FILE: missing,
      REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'present-cert.pem'),
    });
    expect(startFailure(finished).msg).toBe(
      `SMP key: REGISTRY_SMP_KEY_FILE names ${missing}, which cannot be read (ENOENT)`,
    );
    await expect(stat(join(dir, 'server-data'))).rejects.toThrow(/ENOENT/);
  });
});

// Workers need PostgreSQL: once, on the PostgreSQL project. The database named is one that never answers.
describe.runIf(testDatabaseKind === 'postgres')('several workers whose SMP key file cannot be read', () => {
  it('stop at start with that one line, before the database and before any worker', async () => {
    const missing = join(dir, 'no-such-worker-key.pem');
    await writeFile(join(dir, 'workers-cert.pem'), (await testCertificate('workers.example')).cert);
    const finished = await runServerToEnd({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:9/nothing',
      DATABASE_WAIT_SECONDS: '0',
      REGISTRY_WORKERS: '2',
      REGISTRY_SMP_KEY_FILE: missing,
      REGISTRY_SMP_CERTIFICATE_FILE: join(dir, 'workers-cert.pem'),
    });
    expect(startFailure(finished).msg).toBe(
      `SMP key: REGISTRY_SMP_KEY_FILE names ${missing}, which cannot be read (ENOENT)`,
    );
  });
});

describe('a service without a signing key', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers the publication with 503 in the common error body, and the REST API still runs', async () => {
    const participant = encodeURIComponent('iso6523-actorid-upis::0192:987654325');
    expectErrorBody(await t.app.inject(`/${participant}`), 503, /REGISTRY_SMP_KEY_FILE/);
    expectErrorBody(
      await t.app.inject(`/${participant}/services/${encodeURIComponent('busdox-docid-qns::urn:x')}`),
      503,
    );
    const api = await t.app.inject({
      url: '/rest/api/processes',
      headers: { authorization: t.users.admin.authorization },
    });
    expect(api.statusCode).toBe(200);
  });
});
