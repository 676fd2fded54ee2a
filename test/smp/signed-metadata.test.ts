import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedXml } from 'xml-crypto';
import type { QualifiedIdentifier } from '../../src/core/schemas.js';
import { checkedKey, SmpKeys, type SmpKey } from '../../src/smp/keys.js';
import { signedServiceMetadata } from '../../src/smp/signed-metadata.js';
import { signDocument } from '../../src/smp/signing.js';
import { serviceMetadataXml, type PublishedEndpoint, type PublishedProcess } from '../../src/smp/xml.js';
import { base64Der, testCertificate } from '../helpers/certificates.js';
import { readByXpath } from '../helpers/smp.js';

/**
 * The signed service metadata written from its template (src/smp/signed-metadata.ts) is xml-crypto's signature of the
 * same document, byte for byte, on some 1,200 generated answers a run; and its signatures verify with xml-crypto's own
 * verifier, with xmlsec1 (libxmlsec/OpenSSL) and with the JDK's XML signature (secure validation), each against the
 * certificate in use when it was signed, before and after a rollover.
 */

const run = promisify(execFile);
const DAY = 24 * 60 * 60 * 1000;
const JAVA_VERIFIER = join(import.meta.dirname, '..', 'helpers', 'VerifySignatures.java');
/** Participants generated, each with 1 to 30 document types: some 1,200 answers. */
const PARTICIPANTS = 80;
/** Answers of each participant also verified by xmlsec1 and the JDK. */
const VERIFIED_OUTSIDE_PER_PARTICIPANT = 2;

/**
 * The SMP's pairs, and the rollovers from one to another (current, next): the two 2048s and the 3072 sign both before
 * and after a rollover, the 4096 after one only, since its signature costs some ten times 2048's and each answer is
 * signed twice.
 */
const KEY_SIZES = [2048, 2048, 3072, 4096];
const ROLLOVERS: ReadonlyArray<[number, number]> = [
  [0, 1],
  [1, 2],
  [2, 3],
  [2, 0],
];
const ROLLOVER_AT = Date.now() + 30 * DAY;
let pairs: SmpKey[];
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signed-metadata-'));
  pairs = await Promise.all(
    KEY_SIZES.map(async (size, index) => {
      const pems = await testCertificate(
        `SMP ${index} (RSA ${size})`,
        new Date(Date.now() - DAY),
        new Date(Date.now() + 365 * DAY),
        size,
      );
      return checkedKey(pems.key, pems.cert, false);
    }),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const pemsOf = (key: SmpKey) => ({ privateKeyPem: key.privateKeyPem, certificatePem: key.certificatePem });

// Characters XML 1.0 carries, every range of them, and those that need a reference somewhere.
const xmlCharacter = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0xd7ff }),
    fc.integer({ min: 0xe000, max: 0xfffd }),
    fc.integer({ min: 0x10000, max: 0x10ffff }),
  )
  .map((codePoint) => String.fromCodePoint(codePoint));
const needingCare = fc.constantFrom(
  '&',
  '<',
  '>',
  '"',
  "'",
  '\t',
  '\n',
  '\r',
  '\r\n',
  ']]>',
  '&amp;',
  '&#13;',
  '\u2029',
  '\u00A0',
  '\u007F',
  '\uFEFF',
  '\uFFFD',
  '\u{1F600}',
  '\u{10FFFF}',
  ' ',
);
/** Line ends in XML 1.1 only, which xml-crypto's parser reads as line feeds: in some participants' text. */
const xml11LineEnd = fc.constantFrom('\u0085', '\u2028');
// What only a row stored before the registry refused them can hold: written as U+FFFD.
const notCarried = fc
  .oneof(fc.constantFrom(0x0, 0x1, 0x8, 0xb, 0xc, 0xe, 0x1f, 0xfffe, 0xffff), fc.integer({ min: 0xd800, max: 0xdfff }))
  .map((code) => String.fromCharCode(code));
const printableAscii = fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code));
const textWith = (...others: Array<fc.Arbitrary<string>>) =>
  fc.string({
    unit: fc.oneof(
      { weight: 4, arbitrary: needingCare },
      { weight: 3, arbitrary: printableAscii },
      { weight: 3, arbitrary: xmlCharacter },
      { weight: 1, arbitrary: notCarried },
      ...others.map((arbitrary) => ({ weight: 1, arbitrary })),
    ),
    maxLength: 24,
  });
const dateTime = fc.option(
  fc
    .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true })
    .map((date) => `${date.toISOString().slice(0, 19)}Z`),
  { nil: null },
);

function answersOf(endpointCertificates: readonly string[], text: fc.Arbitrary<string>) {
  const identifier: fc.Arbitrary<QualifiedIdentifier> = fc.record({ scheme: text, value: text });
  const endpoint: fc.Arbitrary<PublishedEndpoint> = fc.record({
    transportProfile: text,
    url: text,
    certificate: fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom(...endpointCertificates) },
      { weight: 3, arbitrary: text },
    ),
    serviceDescription: text,
    technicalContactUrl: fc.oneof(fc.constant(''), text),
    requireBusinessLevelSignature: fc.boolean(),
    activationDate: dateTime,
    expirationDate: dateTime,
  });
  const process: fc.Arbitrary<PublishedProcess> = fc.record({
    process: identifier,
    endpoints: fc.array(endpoint, { minLength: 1, maxLength: 2 }),
  });
  return fc.record({
    participant: identifier,
    answers: fc.array(
      fc.record({ documentType: identifier, processes: fc.array(process, { minLength: 1, maxLength: 2 }) }),
      { minLength: 1, maxLength: 30, size: 'max' },
    ),
    rollover: fc.constantFrom(...ROLLOVERS),
    // Before the rollover or after it, its very instant and the one before included.
    at: fc.oneof(
      fc.constantFrom(ROLLOVER_AT - 1, ROLLOVER_AT),
      fc.integer({ min: -20 * DAY, max: 20 * DAY }).map((offset) => ROLLOVER_AT + offset),
    ),
  });
}

/** The signature element of a signed answer: the root's last child, the first `<ds:Signature ` (text never holds a raw `<`). */
const signatureOf = (xml: string) => xml.slice(xml.indexOf('<ds:Signature '), xml.lastIndexOf('</'));
const withoutSignature = (xml: string) => xml.replace(signatureOf(xml), '');

function verifiedByXmlCrypto(xml: string, certificatePem: string): boolean {
  const verifier = new SignedXml({ publicCert: certificatePem, getCertFromKeyInfo: () => null });
  verifier.loadSignature(signatureOf(xml));
  return verifier.checkSignature(xml);
}

/** An answer verified outside this process, with the certificate it must verify with and another it must not. */
interface Verified {
  xml: string;
  certificate: string;
  other: string;
}

describe('the signed service metadata from its template', () => {
  it("is xml-crypto's signature of the same document, byte for byte, and verifies with xml-crypto, xmlsec1 and the JDK", async () => {
    const endpointCertificates = pairs.map((pair) => base64Der(pair.certificatePem));
    const outside: Verified[] = [];
    let answers = 0;
    let sameAsToday = 0;
    const generated = fc.oneof(
      { weight: 4, arbitrary: answersOf(endpointCertificates, textWith()) },
      { weight: 1, arbitrary: answersOf(endpointCertificates, textWith(xml11LineEnd)) },
    );
    fc.assert(
      fc.property(generated, ({ participant, answers: made, rollover, at }) => {
        const [current, next] = rollover.map((index) => pairs[index]) as [SmpKey, SmpKey];
        const { key } = new SmpKeys(current, { key: next, from: ROLLOVER_AT }, () => at).inUse();
        expect(key).toBe(at < ROLLOVER_AT ? current : next);
        for (const [index, { documentType, processes }] of made.entries()) {
          const signed = signedServiceMetadata(participant, documentType, processes, pemsOf(key));
          const unsigned = serviceMetadataXml(participant, documentType, processes);
          const verifiedOutside = index < VERIFIED_OUTSIDE_PER_PARTICIPANT;
          const xml11LineEnds = /[\u0085\u2028]/.test(unsigned);
          if (xml11LineEnds) {
            // Read by xml-crypto's parser these would be line ends (XML 1.1's rule): xml-crypto's is the same document only
            // as the template writes it, with them as references; xmldom writes them back raw.
            const sameDocument = signDocument(withoutSignature(signed), key.privateKeyPem, key.certificatePem);
            expect(signed).toBe(sameDocument.replaceAll('\u0085', '&#x85;').replaceAll('\u2028', '&#x2028;'));
          } else {
            expect(signed).toBe(signDocument(unsigned, key.privateKeyPem, key.certificatePem));
            sameAsToday += 1;
          }
          // xml-crypto's own bytes verify as its own do: its verifier checks those that are not, and those sent outside.
          if (verifiedOutside || xml11LineEnds) {
            expect(verifiedByXmlCrypto(signed, key.certificatePem)).toBe(true);
          }
          answers += 1;
          if (verifiedOutside)
            outside.push({
              xml: signed,
              certificate: key.certificatePem,
              other: (key === current ? next : current).certificatePem,
            });
        }
      }),
      { numRuns: PARTICIPANTS },
    );
    expect(answers).toBeGreaterThan(800);
    expect(sameAsToday).toBeGreaterThan(answers / 2);

    await expectVerifiedOutside(outside);
    // Seconds on a quiet machine; minutes where other processes load it.
  }, 600_000);

  it('carries U+0085 and U+2028 as given, where xml-crypto alone would have made them line feeds', async () => {
    const description = 'Access\u0085point\u2028AS4';
    const processes: PublishedProcess[] = [
      {
        process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
        endpoints: [
          {
            transportProfile: 'peppol-transport-as4-v2_0',
            url: 'https://ap.example/as4',
            certificate: 'MIIB',
            serviceDescription: description,
            technicalContactUrl: 'mailto:ops@ap.example',
            requireBusinessLevelSignature: false,
            activationDate: null,
            expirationDate: null,
          },
        ],
      },
    ];
    const participant = { scheme: 'iso6523-actorid-upis', value: '0192:810000007' };
    const documentType = { scheme: 'busdox-docid-qns', value: 'urn:x::Invoice##urn:y::2.1' };
    const key = pemsOf(pairs[0] as SmpKey);
    const described = async (xml: string) => readByXpath(xml, 'string(//*[local-name()="ServiceDescription"])');

    expect(await described(signedServiceMetadata(participant, documentType, processes, key))).toBe(description);
    expect(
      await described(
        signDocument(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem),
      ),
    ).toBe('Access\npoint\nAS4');
  });
});

/**
 * xmlsec1 (one run per certificate, every answer it signed) and the JDK (one run) verify each answer with the
 * certificate in use when it was signed; and refuse a few with the other certificate of their rollover, or altered.
 */
async function expectVerifiedOutside(verified: readonly Verified[]): Promise<void> {
  const files = await Promise.all(
    verified.map(async ({ xml }, index) => {
      const file = join(dir, `answer-${index}.xml`);
      await writeFile(file, xml);
      return file;
    }),
  );
  const certificateFiles = new Map<string, string>();
  for (const [index, pair] of pairs.entries()) {
    const file = join(dir, `certificate-${index}.pem`);
    await writeFile(file, pair.certificatePem);
    certificateFiles.set(pair.certificatePem, file);
  }
  const certificateFile = (pem: string) => certificateFiles.get(pem) as string;
  const altered = verified.slice(0, 3).map(({ xml }, index) => {
    const file = join(dir, `altered-${index}.xml`);
    // An attribute on the signed root: whatever the generated texts hold, the digest can no longer match.
    const changed = xml.replace('<smp:SignedServiceMetadata ', '<smp:SignedServiceMetadata altered="yes" ');
    expect(changed).not.toBe(xml);
    return { file, xml: changed };
  });
  await Promise.all(altered.map(({ file, xml }) => writeFile(file, xml)));

  const refused = [
    ...verified
      .slice(0, 3)
      .map(({ other }, index) => ({ file: files[index] as string, certificate: certificateFile(other) })),
    ...altered.map(({ file }, index) => ({
      file,
      certificate: certificateFile((verified[index] as Verified).certificate),
    })),
  ];
  const javaList = join(dir, 'java-list.txt');
  await writeFile(
    javaList,
    [
      ...verified.map(({ certificate }, index) => `${files[index]} ${certificateFile(certificate)}`),
      ...refused.map(({ file, certificate }) => `${file} ${certificate}`),
    ].join('\n'),
  );
  const bySigner = [...certificateFiles.entries()].map(([pem, certificate]) => ({
    certificate,
    answers: files.filter((_file, index) => (verified[index] as Verified).certificate === pem),
  }));

  const xmlsec = (certificate: string, answers: readonly string[]) =>
    run('xmlsec1', ['--verify', '--enabled-reference-uris', 'empty', '--trusted-pem', certificate, ...answers], {
      maxBuffer: 16 * 2 ** 20,
    });
  const [java, ...xmlsecRuns] = await Promise.all([
    run('java', [JAVA_VERIFIER, javaList], { maxBuffer: 16 * 2 ** 20 }),
    ...bySigner
      .filter(({ answers }) => answers.length > 0)
      .map(({ certificate, answers }) => xmlsec(certificate, answers)),
  ]);
  // xmlsec1 stops at the first answer that fails: each run's every answer said OK.
  expect(
    xmlsecRuns.reduce((sum, { stderr }) => sum + stderr.split('\n').filter((line) => line === 'OK').length, 0),
  ).toBe(verified.length);
  const refusedByXmlsec = await Promise.all(
    refused.map(({ file, certificate }) =>
      xmlsec(certificate, [file]).then(
        () => false,
        () => true,
      ),
    ),
  );
  expect(refusedByXmlsec).toEqual(refused.map(() => true));

  const javaSaid = java.stdout.trim().split('\n');
  expect(javaSaid.slice(0, verified.length)).toEqual(files.map((file) => `valid ${file}`));
  expect(javaSaid.slice(verified.length).map((line) => line.split(' ')[0])).toEqual(refused.map(() => 'invalid'));
}
