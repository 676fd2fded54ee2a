import { randomBytes, X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { formatQualifiedIdentifier, PEPPOL_IDENTIFIERS_NS, type QualifiedIdentifier } from '../src/core/schemas.js';
import {
  clientCertificateOf,
  startLocalServer,
  type Failure,
  type LocalServer,
  type LocalTls,
  type Pace,
  paceOfArguments,
} from './local-server.js';
import {
  escapeXml,
  LOCATOR_NS,
  MIGRATION_KEY_PATTERN,
  participantXml,
  type SmlFault,
} from '../src/network/sml-client.js';

export interface LocalSml extends LocalServer {
  /** What it holds: participant identifiers (`scheme::value`) by SMP id. */
  registrations: Map<string, Set<string>>;
  /**
   * Counts of the organizations it created, deleted and migrated (by single calls and lists), of the CreateList and
   * DeleteList calls it accepted, of the calls it refused, and of failure-mode faults.
   */
  calls: {
    create: number;
    delete: number;
    migrate: number;
    createList: number;
    deleteList: number;
    refused: number;
    faults: number;
  };
  /** The migrations prepared (PrepareToMigrate): by participant, the SMP that holds it and the key. */
  migrations: Map<string, { smp: string; key: string }>;
  /** When each participant was last created (Date.now()), for measuring delivery lag. */
  createdAt: Map<string, number>;
  /**
   * The certificate changes announced with PrepareChangeCertificate, by the fingerprint of the certificate that
   * announced it: the next certificate's fingerprint and the day it takes effect. A new announcement replaces one.
   */
  certificateChanges: Map<string, { certificate: string; migrationDate: string }>;
  /**
   * From now on, misbehave for the requests that name this participant only (`none` ends it): as `Failure` says,
   * or `clientFault`, the fault JAX-WS answers a request it cannot read.
   */
  failFor(participant: string, failure: Failure | 'clientFault' | 'none'): void;
  /** From now on, answer this operation (its body element, e.g. `PrepareMigrationRecord`) `ms` after doing it. */
  answerLate(operation: string, ms: number): void;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, attributeNamePrefix: '@' });
const PAGE = 100;

const soap = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>${body}</S:Body></S:Envelope>`;
/** A fault as BDMSL answers it: `[ERR-nnn] message [correlation id]`, and the WSDL's fault element as `detail`. */
function fault(kind: SmlFault, code: string, text: string): string {
  const message = escapeXml(`[${code}] ${text} [${randomBytes(16).toString('hex')}]`);
  return soap(
    `<S:Fault><faultcode>S:Server</faultcode><faultstring>${message}</faultstring>` +
      `<detail><${kind} xmlns="${LOCATOR_NS}"><FaultMessage>${message}</FaultMessage></${kind}></detail></S:Fault>`,
  );
}

/**
 * How BDMSL (JAX-WS on Apache CXF) answers a request it cannot read, not well-formed or not valid against its
 * schema: HTTP 500, faultcode `soap:Client`, CXF's message, and no `detail` (no fault element of the WSDL).
 */
function clientFault(text: string): string {
  return soap(`<S:Fault><faultcode>S:Client</faultcode><faultstring>${escapeXml(text)}</faultstring></S:Fault>`);
}

/** A character XML 1.0 cannot carry (as text or as a character reference). */
const NOT_XML_1_0 =
  /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]|&#0*(?:[0-8]|1[1-24-9]|2\d|3[01]);|&#x0*(?:[0-8bcef]|1[0-9a-f]);/iu;

/** Why CXF's StAX reader would stop reading `text`; undefined when it is well-formed XML 1.0. */
function unreadable(text: string): string | undefined {
  const illegal = NOT_XML_1_0.exec(text);
  if (illegal) return `Error reading XMLStreamReader: Illegal character at offset ${illegal.index}`;
  const checked = XMLValidator.validate(text);
  return checked === true
    ? undefined
    : `Error reading XMLStreamReader: ${checked.err.msg} [row,col]: [${checked.err.line},${checked.err.col}]`;
}

const alreadyExists = ({ scheme, value }: QualifiedIdentifier) =>
  fault(
    'BadRequestFault',
    'ERR-106',
    `The participant identifier [${value}] with scheme: [${scheme}] already exist with naptr service [Meta:SMP] on subdomain: [local]`,
  );

/**
 * A small SML for development and tests: BDMSL's ManageBusinessIdentifierService (Create, Delete, CreateList, DeleteList, List, PrepareToMigrate, Migrate) in
 * memory over plain HTTP (or HTTPS requiring a client certificate: `tls`), with BDMSL's SOAP faults (a Create of
 * an identifier any SMP holds: BadRequestFault ERR-106; a Delete of one this SMP does not hold: NotFoundFault
 * ERR-100; a migration key against BDMSL's rule: BadRequestFault ERR-106; a Migrate with a key no PrepareToMigrate
 * gave: NotFoundFault ERR-100), and switchable failures; and BDMSL's own service's PrepareChangeCertificate
 * (`/bdmslservice`). Run it alone with `tsx dev/local-sml.ts [port] [latencyMs] [maxInFlight]`.
 */
export async function startLocalSml(port = 0, tls?: LocalTls, pace?: Pace): Promise<LocalSml> {
  const registrations = new Map<string, Set<string>>();
  const calls = { create: 0, delete: 0, migrate: 0, createList: 0, deleteList: 0, refused: 0, faults: 0 };
  const migrations = new Map<string, { smp: string; key: string }>();
  const heldByAnyone = (participant: string) => [...registrations.values()].some((ids) => ids.has(participant));
  const createdAt = new Map<string, number>();
  const certificateChanges = new Map<string, { certificate: string; migrationDate: string }>();
  const failing = new Map<string, Failure | 'clientFault'>();
  const late = new Map<string, number>();
  const server = await startLocalServer(
    port,
    (request, text, response, misbehave) => {
      let answerAfter = 0;
      const send = (status: number, xml: string) => {
        const answer = () => response.writeHead(status, { 'content-type': 'text/xml; charset=utf-8' }).end(xml);
        if (answerAfter > 0) setTimeout(answer, answerAfter);
        else answer();
      };
      const refuse = (xml: string) => {
        calls.refused += 1;
        send(500, xml);
      };
      if (request.url?.endsWith('/bdmslservice')) {
        const answer = prepareChangeCertificate(
          clientCertificateOf(request),
          parser.parse(text) as SoapRequest,
          certificateChanges,
        );
        return send(answer.status, answer.xml);
      }
      if (!request.url?.endsWith('/manageparticipantidentifier')) return void response.writeHead(404).end();
      const cannotRead = unreadable(text);
      if (cannotRead) return refuse(clientFault(cannotRead));
      const body =
        (parser.parse(text) as { Envelope?: { Body?: Record<string, Record<string, unknown>> } }).Envelope?.Body ?? {};
      const [operation, content] = Object.entries(body)[0] ?? [];
      const smp = String(content?.ServiceMetadataPublisherID ?? '');
      if (!operation || !smp)
        return refuse(fault('BadRequestFault', 'ERR-106', 'no operation or no ServiceMetadataPublisherID'));
      const held = registrations.get(smp) ?? new Set<string>();
      registrations.set(smp, held);
      if (operation === 'CreateList' || operation === 'DeleteList') {
        const members = identifiersOf(content?.ParticipantIdentifier);
        if (members.length === 0)
          return refuse(fault('BadRequestFault', 'ERR-106', 'At least one participant identifier must be provided'));
        for (const member of members) {
          const failure = failing.get(formatQualifiedIdentifier(member));
          if (failure === 'clientFault')
            return refuse(clientFault(`Unmarshalling Error: the list cannot be read (local SML failure mode)`));
          if (failure) return misbehave(failure);
        }
        answerAfter = late.get(operation) ?? 0;
        // One transaction, as BDMSL's: each member checked as its single call would be; one refused refuses the
        // list with that member's fault, and nothing of the list is stored.
        const listed = new Set<string>();
        for (const member of members) {
          const participant = formatQualifiedIdentifier(member);
          if (operation === 'CreateList' && (heldByAnyone(participant) || listed.has(participant)))
            return refuse(alreadyExists(member));
          if (operation === 'DeleteList' && (!held.has(participant) || listed.has(participant)))
            return refuse(
              fault('NotFoundFault', 'ERR-100', `The participant identifier '${participant}' doesn't exist.`),
            );
          listed.add(participant);
        }
        for (const participant of listed) {
          if (operation === 'CreateList') {
            held.add(participant);
            createdAt.set(participant, Date.now());
          } else held.delete(participant);
        }
        if (operation === 'CreateList') {
          calls.createList += 1;
          calls.create += listed.size;
        } else {
          calls.deleteList += 1;
          calls.delete += listed.size;
        }
        return send(200, soap(''));
      }
      const id = content?.ParticipantIdentifier as { '#text'?: unknown; '@scheme'?: string } | undefined;
      const identifier = id
        ? { scheme: String(id['@scheme']).toLowerCase(), value: String(id['#text']).toLowerCase() }
        : undefined;
      const participant = identifier ? formatQualifiedIdentifier(identifier) : '';
      const failure = failing.get(participant);
      if (failure === 'clientFault')
        return refuse(
          clientFault(`Unmarshalling Error: the request for ${participant} cannot be read (local SML failure mode)`),
        );
      if (failure) return misbehave(failure);
      answerAfter = late.get(operation) ?? 0;
      if (operation === 'CreateParticipantIdentifier' && identifier) {
        if (heldByAnyone(participant)) return refuse(alreadyExists(identifier));
        calls.create += 1;
        held.add(participant);
        createdAt.set(participant, Date.now());
        return send(200, soap(''));
      }
      if (operation === 'DeleteParticipantIdentifier' && participant) {
        if (!held.delete(participant))
          return refuse(
            fault('NotFoundFault', 'ERR-100', `The participant identifier '${participant}' doesn't exist.`),
          );
        calls.delete += 1;
        return send(200, soap(''));
      }
      const key = String(content?.MigrationKey ?? '');
      if (
        (operation === 'PrepareMigrationRecord' || operation === 'CompleteMigrationRecord') &&
        !MIGRATION_KEY_PATTERN.test(key)
      ) {
        return refuse(fault('BadRequestFault', 'ERR-106', `The migration key '${key}' is not valid.`));
      }
      if (operation === 'PrepareMigrationRecord' && participant) {
        if (!held.has(participant))
          return refuse(
            fault('NotFoundFault', 'ERR-100', `The participant identifier '${participant}' doesn't exist.`),
          );
        migrations.set(participant, { smp, key });
        return send(200, soap(''));
      }
      if (operation === 'CompleteMigrationRecord' && participant) {
        const prepared = migrations.get(participant);
        if (prepared?.key !== key || !registrations.get(prepared.smp)?.has(participant)) {
          return refuse(
            fault(
              'NotFoundFault',
              'ERR-100',
              `The migration key for the participant identifier '${participant}' doesn't exist.`,
            ),
          );
        }
        registrations.get(prepared.smp)?.delete(participant);
        migrations.delete(participant);
        held.add(participant);
        calls.migrate += 1;
        return send(200, soap(''));
      }
      if (operation === 'PageRequest')
        return send(200, page([...held].sort(), Number(content?.NextPageIdentifier ?? 0) || 0));
      return refuse(fault('BadRequestFault', 'ERR-106', `unknown operation ${operation}`));
    },
    (response) => {
      calls.faults += 1;
      response
        .writeHead(500, { 'content-type': 'text/xml; charset=utf-8' })
        .end(fault('InternalErrorFault', 'ERR-105', 'the SML is failing (local SML failure mode)'));
    },
    tls,
    pace,
  );
  return {
    ...server,
    registrations,
    calls,
    createdAt,
    migrations,
    certificateChanges,
    failFor(participant, how) {
      if (how === 'none') failing.delete(participant);
      else failing.set(participant, how);
    },
    answerLate(operation, ms) {
      late.set(operation, ms);
    },
  };
}

/** The ParticipantIdentifier elements of a list (one parses as an object, several as an array), lower-cased as BDMSL keeps them. */
function identifiersOf(elements: unknown): QualifiedIdentifier[] {
  const all = Array.isArray(elements) ? (elements as unknown[]) : elements === undefined ? [] : [elements];
  return all.map((element) => {
    const id = element as { '#text'?: unknown; '@scheme'?: string };
    return { scheme: String(id['@scheme']).toLowerCase(), value: String(id['#text']).toLowerCase() };
  });
}

type SoapRequest = { Envelope?: { Body?: Record<string, Record<string, unknown>> } };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * BDMSL's PrepareChangeCertificate, with its checks: a caller known by its certificate (Unauthorized), a new
 * certificate that parses, a migration date not in the past at which the new certificate is valid (BadRequest); without
 * a date, the certificate's own start, which must be ahead. Success is an empty body.
 */
function prepareChangeCertificate(
  caller: string | undefined,
  request: SoapRequest,
  changes: LocalSml['certificateChanges'],
): { status: number; xml: string } {
  const content = request.Envelope?.Body?.PrepareChangeCertificate;
  if (!content)
    return { status: 500, xml: fault('BadRequestFault', 'ERR-106', 'no PrepareChangeCertificate in the request') };
  if (!caller)
    return {
      status: 500,
      xml: fault('UnauthorizedFault', 'ERR-101', 'no client certificate: the SMP is known by its certificate'),
    };
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(String(content.newCertificatePublicKey ?? ''), 'base64'));
  } catch {
    return {
      status: 500,
      xml: fault('BadRequestFault', 'ERR-106', 'newCertificatePublicKey is not a base64 X.509 certificate'),
    };
  }
  const given = content.migrationDate === undefined ? undefined : String(content.migrationDate);
  if (given !== undefined && !DAY.test(given))
    return { status: 500, xml: fault('BadRequestFault', 'ERR-106', `migrationDate ${given} is not a date`) };
  const migrationDate = given ?? new Date(certificate.validFrom).toISOString().slice(0, 10);
  const today = new Date().toISOString().slice(0, 10);
  if (migrationDate < today)
    return {
      status: 500,
      xml: fault('BadRequestFault', 'ERR-106', `the migration date ${migrationDate} is in the past`),
    };
  const [validFrom, validTo] = [certificate.validFrom, certificate.validTo].map((instant) =>
    new Date(instant).toISOString().slice(0, 10),
  );
  if (migrationDate < (validFrom as string) || migrationDate > (validTo as string)) {
    return {
      status: 500,
      xml: fault('BadRequestFault', 'ERR-106', `the new certificate is not valid on ${migrationDate}`),
    };
  }
  changes.set(caller, { certificate: certificate.fingerprint256, migrationDate });
  return { status: 200, xml: soap('') };
}

/** One page of the List operation's answer, from `start`. */
function page(all: string[], start: number): string {
  const ids = all
    .slice(start, start + PAGE)
    .map(participantXml)
    .join('');
  const next = start + PAGE < all.length ? `<NextPageIdentifier>${start + PAGE}</NextPageIdentifier>` : '';
  return soap(
    `<ParticipantIdentifierPage xmlns="${LOCATOR_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}">${ids}${next}</ParticipantIdentifierPage>`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const sml = await startLocalSml(Number(process.argv[2] ?? 8091), undefined, paceOfArguments(process.argv.slice(3)));
  console.log(`local SML at ${sml.url} (SML_URL=${sml.url})`);
}
