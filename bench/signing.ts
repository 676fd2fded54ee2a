/**
 * What one signed service metadata answer costs a core, against the bare RSA signature inside it, and what signing
 * every answer ahead would cost at a country's size:
 *   npx tsx bench/signing.ts [--signatures 3000] [--participants 2000000] [--against <another checkout>]
 * One process, one thread, no database: run it on an otherwise idle machine. `--against` signs with that checkout's
 * src/smp/signing.ts too, in rounds taking turns with this one's, so that both see the same machine.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { signDocument } from '../src/smp/signing.js';
import { serviceMetadataXml, type PublishedProcess } from '../src/smp/xml.js';
import { benchSmpKey } from './smp.js';

const { values: args } = parseArgs({
  options: { signatures: { type: 'string', default: '3000' }, participants: { type: 'string', default: '2000000' }, against: { type: 'string' } },
});
const signatures = Number(args.signatures);
const participants = Number(args.participants);

const { key } = await benchSmpKey();
const certificate = key.certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '');
const participant = { scheme: 'iso6523-actorid-upis', value: '0192:810000007' };
const documentType = { scheme: 'busdox-docid-qns', value: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1' };
const processes: PublishedProcess[] = [{
  process: { scheme: 'cenbii-procid-ubl', value: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0' },
  endpoints: [{
    transportProfile: 'peppol-transport-as4-v2_0', url: 'https://ap.example.no/as4', certificate, serviceDescription: 'Access point',
    technicalContactUrl: 'https://ap.example.no/contact', requireBusinessLevelSignature: false, activationDate: null, expirationDate: null,
  }],
}];

/** Milliseconds per call of `work`, after a warm-up. */
function msPer(work: () => unknown): number {
  for (let i = 0; i < Math.min(200, signatures); i += 1) work();
  const started = performance.now();
  for (let i = 0; i < signatures; i += 1) work();
  return (performance.now() - started) / signatures;
}

const privateKey = createPrivateKey(key.privateKeyPem);
const answer = signDocument(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem);
const signed = msPer(() => signDocument(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem));
const rsa = msPer(() => sign('sha256', Buffer.from(answer), privateKey));
if (args.against) {
  const other = (await import(join(resolve(args.against), 'src/smp/signing.ts')) as { signDocument: typeof signDocument }).signDocument;
  const total = { this: 0, other: 0 };
  for (let round = 0; round < 10; round += 1) {
    total.other += msPer(() => other(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem));
    total.this += msPer(() => signDocument(serviceMetadataXml(participant, documentType, processes), key.privateKeyPem, key.certificatePem));
  }
  console.log(`taking turns, 10 rounds: ${(total.this / 10).toFixed(3)} ms here, ${(total.other / 10).toFixed(3)} ms in ${args.against} `
    + `(${Math.round(100 * (1 - total.this / total.other))} % less here)`);
}
console.log(`one answer (${answer.length} bytes): ${signed.toFixed(3)} ms of a core, ${Math.round(1000 / signed)}/s; of which the RSA signature ${rsa.toFixed(3)} ms (${Math.round((100 * rsa) / signed)} %)`);
for (const documentTypes of [4, 30]) {
  const answers = participants * documentTypes;
  console.log(`every answer of ${participants.toLocaleString('en')} participants with ${documentTypes} document types each: `
    + `${(answers * answer.length / 2 ** 30).toFixed(0)} GiB, ${(answers * signed / 3_600_000).toFixed(1)} hours of a core to sign`);
}
