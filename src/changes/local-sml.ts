import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';
import { clientCertificateOf, startLocalServer, type LocalServer, type LocalTls } from './local-server.js';
import { IDS_NS, LOCATOR_NS } from './sml-client.js';

export interface LocalSml extends LocalServer {
  /** What it holds: participant identifiers (`scheme::value`) by SMP id. */
  registrations: Map<string, Set<string>>;
  /** Counts of the Create and Delete calls it accepted. */
  calls: { create: number; delete: number; faults: number };
  /** When each participant was last created (Date.now()), for measuring delivery lag. */
  createdAt: Map<string, number>;
  /**
   * The certificate changes announced with PrepareChangeCertificate, by the fingerprint of the certificate that
   * announced it: the next certificate's fingerprint and the day it takes effect. A new announcement replaces one.
   */
  certificateChanges: Map<string, { certificate: string; migrationDate: string }>;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, attributeNamePrefix: '@' });
const PAGE = 100;

const soap = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>${body}</S:Body></S:Envelope>`;
const fault = (code: string, text: string) =>
  soap(`<S:Fault><faultcode>S:Server</faultcode><faultstring>${code}: ${text}</faultstring></S:Fault>`);

/**
 * A small SML for development and tests: BDMSL's ManageBusinessIdentifierService (Create, Delete, List) in
 * memory over plain HTTP (or HTTPS requiring a client certificate: `tls`), with its SOAP faults (NotFound on deleting what it does not hold, BadRequest), and
 * switchable failures; and BDMSL's own service's PrepareChangeCertificate (`/bdmslservice`). Run it alone with `tsx src/changes/local-sml.ts [port]`.
 */
export async function startLocalSml(port = 0, tls?: LocalTls): Promise<LocalSml> {
  const registrations = new Map<string, Set<string>>();
  const calls = { create: 0, delete: 0, faults: 0 };
  const createdAt = new Map<string, number>();
  const certificateChanges = new Map<string, { certificate: string; migrationDate: string }>();
  const server = await startLocalServer(port, (request, text, response) => {
    const send = (status: number, xml: string) => response.writeHead(status, { 'content-type': 'text/xml; charset=utf-8' }).end(xml);
    if (request.url?.endsWith('/bdmslservice')) {
      const answer = prepareChangeCertificate(clientCertificateOf(request), parser.parse(text) as SoapRequest, certificateChanges);
      return send(answer.status, answer.xml);
    }
    if (!request.url?.endsWith('/manageparticipantidentifier')) return send(404, fault('NotFound', 'no such service'));
    const body = (parser.parse(text) as { Envelope?: { Body?: Record<string, Record<string, unknown>> } }).Envelope?.Body ?? {};
    const [operation, content] = Object.entries(body)[0] ?? [];
    const smp = String(content?.ServiceMetadataPublisherID ?? '');
    if (!operation || !smp) return send(500, fault('BadRequest', 'no operation or no ServiceMetadataPublisherID'));
    const held = registrations.get(smp) ?? new Set<string>();
    registrations.set(smp, held);
    const id = content?.ParticipantIdentifier as { '#text'?: unknown; '@scheme'?: string } | undefined;
    const participant = id ? `${id['@scheme']}::${String(id['#text'])}`.toLowerCase() : '';
    if (operation === 'CreateParticipantIdentifier' && participant) {
      calls.create += 1;
      held.add(participant);
      createdAt.set(participant, Date.now());
      return send(200, soap(''));
    }
    if (operation === 'DeleteParticipantIdentifier' && participant) {
      if (!held.delete(participant)) return send(500, fault('NotFound', `${participant} is not registered`));
      calls.delete += 1;
      return send(200, soap(''));
    }
    if (operation === 'PageRequest') return send(200, page([...held].sort(), Number(content?.NextPageIdentifier ?? 0) || 0));
    return send(500, fault('BadRequest', `unknown operation ${operation}`));
  }, (response) => {
    calls.faults += 1;
    response.writeHead(500, { 'content-type': 'text/xml; charset=utf-8' }).end(fault('InternalError', 'the SML is failing (local SML failure mode)'));
  }, tls);
  return { ...server, registrations, calls, createdAt, certificateChanges };
}

type SoapRequest = { Envelope?: { Body?: Record<string, Record<string, unknown>> } };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * BDMSL's PrepareChangeCertificate, with its checks: a caller known by its certificate (Unauthorized), a new
 * certificate that parses, a migration date not in the past at which the new certificate is valid (BadRequest); without
 * a date, the certificate's own start, which must be ahead. Success is an empty body.
 */
function prepareChangeCertificate(caller: string | undefined, request: SoapRequest, changes: LocalSml['certificateChanges']): { status: number; xml: string } {
  const content = request.Envelope?.Body?.PrepareChangeCertificate;
  if (!content) return { status: 500, xml: fault('BadRequest', 'no PrepareChangeCertificate in the request') };
  if (!caller) return { status: 500, xml: fault('Unauthorized', 'no client certificate: the SMP is known by its certificate') };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(String(content.newCertificatePublicKey ?? ''), 'base64'));
  } catch {
    return { status: 500, xml: fault('BadRequest', 'newCertificatePublicKey is not a base64 X.509 certificate') };
  }
  const given = content.migrationDate === undefined ? undefined : String(content.migrationDate);
  if (given !== undefined && !DAY.test(given)) return { status: 500, xml: fault('BadRequest', `migrationDate ${given} is not a date`) };
  const migrationDate = given ?? new Date(certificate.validFrom).toISOString().slice(0, 10);
  const today = new Date().toISOString().slice(0, 10);
  if (migrationDate < today) return { status: 500, xml: fault('BadRequest', `the migration date ${migrationDate} is in the past`) };
  const [validFrom, validTo] = [certificate.validFrom, certificate.validTo].map((instant) => new Date(instant).toISOString().slice(0, 10));
  if (migrationDate < (validFrom as string) || migrationDate > (validTo as string)) {
    return { status: 500, xml: fault('BadRequest', `the new certificate is not valid on ${migrationDate}`) };
  }
  changes.set(caller, { certificate: certificate.fingerprint256, migrationDate });
  return { status: 200, xml: soap('') };
}

/** One page of the List operation's answer, from `start`. */
function page(all: string[], start: number): string {
  const ids = all.slice(start, start + PAGE).map((entry) => {
    const at = entry.indexOf('::');
    return `<ids:ParticipantIdentifier scheme="${entry.slice(0, at)}">${entry.slice(at + 2)}</ids:ParticipantIdentifier>`;
  }).join('');
  const next = start + PAGE < all.length ? `<NextPageIdentifier>${start + PAGE}</NextPageIdentifier>` : '';
  return soap(`<ParticipantIdentifierPage xmlns="${LOCATOR_NS}" xmlns:ids="${IDS_NS}">${ids}${next}</ParticipantIdentifierPage>`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sml = await startLocalSml(Number(process.argv[2] ?? 8091));
  console.log(`local SML at ${sml.url} (SML_URL=${sml.url})`);
}
