import { X509Certificate } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { formatQualifiedIdentifier, parseQualifiedIdentifier, PEPPOL_IDENTIFIERS_NS } from '../core/schemas.js';
import { characterXmlCannotCarry, xmlEscaped } from '../core/xml-text.js';
import { clientTls, type ClientTlsOptions } from './client-tls.js';
import { callPeer, type PeerBounds } from '../http/peer-http.js';

/** BDMSL's ManageBusinessIdentifierService (SOAP 1.1, document/literal). */
const MANAGE_NS = 'http://busdox.org/serviceMetadata/ManageBusinessIdentifierService/1.0/';
export const LOCATOR_NS = 'http://busdox.org/serviceMetadata/locator/1.0/';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
/** The official SML's SOAPAction values carry nine blanks before the colon; clients send them so. */
const soapAction = (operation: string) => `"${MANAGE_NS}         :${operation}"`;
/** BDMSL's own service (peppol-commons `BDMSLClient`, its WSDL BDMSLService-1.0): the certificate rollover. */
const BDMSL_DATA_NS = 'ec:services:wsdl:BDMSL:data:1.0';
const PREPARE_CHANGE_CERTIFICATE_ACTION = '"ec:services:wsdl:BDMSL:1.0:prepareChangeCertificateIn"';

/** The SMP's client certificate (mutual TLS; needed for an https SML) and the SML's CA. */
export interface SmlOptions extends ClientTlsOptions, PeerBounds {
  /** The SML's base URL; `{url}/manageparticipantidentifier` and `{url}/bdmslservice` are its services. */
  url: string;
  /** This SMP's identifier at the SML. */
  smpId: string;
}

/** The fault elements of the SML's WSDL, the `detail` of its SOAP faults: what kind of refusal it is. */
const SML_FAULTS = ['BadRequestFault', 'NotFoundFault', 'UnauthorizedFault', 'InternalErrorFault'] as const;
/**
 * The fault's kind: a fault element of the WSDL, or `soap:Client` for a fault without one whose `faultcode` blames
 * the request (how JAX-WS/CXF answers a request it cannot read: not well-formed, or not valid against the schema).
 */
export type SmlFault = (typeof SML_FAULTS)[number] | 'soap:Client';

/**
 * An answer of the SML that is not success: a SOAP fault (`fault` its kind, `code` BDMSL's `ERR-nnn`), a timeout,
 * a refused connection, an answer too large, an HTTP error without a fault.
 */
export class SmlError extends Error {
  constructor(
    message: string,
    readonly fault?: SmlFault,
    readonly code?: string,
  ) {
    super(message);
  }

  /** A refusal no retry can cure: a fault the WSDL names, but for the SML's internal error, or a client fault. */
  get final(): boolean {
    return this.fault !== undefined && this.fault !== 'InternalErrorFault';
  }
}

/** A SOAP message carries no document type declaration (SOAP 1.1, 3): one that does is not read at all. */
const DOCTYPE = /<!DOCTYPE/i;

/**
 * Text for the SML's requests (core/xml-text.ts). One holding a character XML cannot carry (only a row stored before
 * the registry refused them can) is never sent: the SML could not read the request, and no retry would change that.
 */
export function escapeXml(text: string): string {
  const unwritable = characterXmlCannotCarry(text);
  if (unwritable)
    throw new SmlError(
      `not sent to the SML: the request would hold ${unwritable}, which XML cannot carry`,
      'BadRequestFault',
    );
  return xmlEscaped(text);
}

/**
 * `iso6523-actorid-upis::0192:123` as the SML's ParticipantIdentifier element. One without a scheme goes as a value
 * with an empty scheme, for the SML to refuse.
 */
export function participantXml(participant: string): string {
  const { scheme, value } = parseQualifiedIdentifier(participant) ?? { scheme: '', value: participant };
  return `<ids:ParticipantIdentifier scheme="${escapeXml(scheme)}">${escapeXml(value)}</ids:ParticipantIdentifier>`;
}

const envelope = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body>${body}</S:Body></S:Envelope>`;

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  isArray: (name) => name === 'ParticipantIdentifier',
});

export interface SmlClient {
  create(participant: string): Promise<void>;
  delete(participant: string): Promise<void>;
  /**
   * BDMSL's CreateList and DeleteList: the participants in one call, in one transaction at the SML. All or nothing:
   * one member refused (already registered, not found, not valid) refuses the list with the fault its single call
   * would get, and nothing of the list is done.
   */
  createList(participants: readonly string[]): Promise<void>;
  deleteList(participants: readonly string[]): Promise<void>;
  /** Every participant identifier the SML holds for this SMP (its List operation, page by page). */
  list(): Promise<string[]>;
  /**
   * BDMSL's PrepareChangeCertificate: from `migrationDate` (its UTC day) the SML expects `certificatePem` as this
   * SMP's client certificate. Made with the current one; a second announcement replaces the first.
   */
  prepareChangeCertificate(certificatePem: string, migrationDate: Date): Promise<void>;
  /** Takes over a participant another SMP prepared to migrate with `key` (Migrate). */
  migrate(participant: string, key: string): Promise<void>;
  /** Lets another SMP take over a participant this SMP holds, with `key` (PrepareToMigrate). */
  prepareToMigrate(participant: string, key: string): Promise<void>;
}

/**
 * BDMSL's rule for a migration key (as phax/peppol-commons states it): 8 to 24 characters without blanks, at least
 * two each of upper-case letters, lower-case letters, digits and `@#$%()[]{}*^_-!~|+=`.
 */
export const MIGRATION_KEY_PATTERN =
  /^(?=.{8,24}$)(?=(.*[@#$%()[\]{}*^_\-!~|+=]){2,})(?=(.*[A-Z]){2})(?=(.*[a-z]){2})(?=(.*[0-9]){2})(?=\S+$).*$/;

export function smlClient(options: SmlOptions): SmlClient {
  const base = options.url.replace(/\/$/, '');
  const target = new URL(`${base}/manageparticipantidentifier`);
  const bdmslTarget = new URL(`${base}/bdmslservice`);
  const tls = clientTls(options);
  const smp = `<ServiceMetadataPublisherID>${escapeXml(options.smpId)}</ServiceMetadataPublisherID>`;

  const call = (operation: string, body: string) => callAt(target, soapAction(operation), body);

  async function callAt(url: URL, action: string, body: string): Promise<Record<string, unknown>> {
    const request = {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: action },
      body: envelope(body),
      tls: tls(),
    };
    const text = await callPeer(url, request, options, SmlCallError);
    if (DOCTYPE.test(text.body))
      throw new SmlError(`SML answered HTTP ${text.status} with a document type declaration`);
    const parsed = parser.parse(text.body) as { Envelope?: { Body?: Record<string, unknown> | '' } };
    // An empty Body (Create, Delete) parses to an empty string.
    const content = parsed.Envelope?.Body;
    const answer = typeof content === 'object' ? content : {};
    const fault = answer.Fault as { faultstring?: unknown; faultcode?: unknown; detail?: unknown } | undefined;
    if (fault) throw faultError(fault);
    if (text.status >= 300 || content === undefined) throw new SmlError(`SML answered HTTP ${text.status}`);
    return answer;
  }

  const manage = (operation: 'create' | 'delete') => async (participant: string) => {
    const element = operation === 'create' ? 'CreateParticipantIdentifier' : 'DeleteParticipantIdentifier';
    await call(
      `${operation}In`,
      `<${element} xmlns="${LOCATOR_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}">${smp}${participantXml(participant)}</${element}>`,
    );
  };

  const list = (element: 'CreateList' | 'DeleteList', action: string) => async (participants: readonly string[]) => {
    // ParticipantIdentifierPageType: the identifiers, then the SMP's.
    await call(
      action,
      `<${element} xmlns="${LOCATOR_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}">${participants.map(participantXml).join('')}${smp}</${element}>`,
    );
  };

  const migration =
    (element: 'PrepareMigrationRecord' | 'CompleteMigrationRecord', action: string) =>
    async (participant: string, key: string) => {
      await call(
        action,
        `<${element} xmlns="${LOCATOR_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}">${smp}${participantXml(participant)}<MigrationKey>${escapeXml(key)}</MigrationKey></${element}>`,
      );
    };

  return {
    create: manage('create'),
    delete: manage('delete'),
    createList: list('CreateList', 'createListIn'),
    deleteList: list('DeleteList', 'deleteListIn'),
    migrate: migration('CompleteMigrationRecord', 'migrateIn'),
    prepareToMigrate: migration('PrepareMigrationRecord', 'prepareMigrateIn'),
    async list() {
      const found: string[] = [];
      let next = '';
      do {
        const answer = await call(
          'listIn',
          `<PageRequest xmlns="${LOCATOR_NS}">${smp}${next ? `<NextPageIdentifier>${escapeXml(next)}</NextPageIdentifier>` : ''}</PageRequest>`,
        );
        const page = answer.ParticipantIdentifierPage as
          | { ParticipantIdentifier?: Array<{ '#text': unknown; '@scheme': string }>; NextPageIdentifier?: unknown }
          | undefined;
        for (const id of page?.ParticipantIdentifier ?? [])
          found.push(formatQualifiedIdentifier({ scheme: id['@scheme'], value: String(id['#text']) }));
        next = page?.NextPageIdentifier === undefined ? '' : String(page.NextPageIdentifier);
      } while (next);
      return found;
    },
    async prepareChangeCertificate(certificatePem, migrationDate) {
      const certificate = new X509Certificate(certificatePem).raw.toString('base64');
      const day = migrationDate.toISOString().slice(0, 10);
      await callAt(
        bdmslTarget,
        PREPARE_CHANGE_CERTIFICATE_ACTION,
        `<PrepareChangeCertificate xmlns="${BDMSL_DATA_NS}">` +
          `<newCertificatePublicKey>${certificate}</newCertificatePublicKey><migrationDate>${day}</migrationDate></PrepareChangeCertificate>`,
      );
    },
  };
}

const textOf = (value: unknown) =>
  String(
    typeof value === 'object' && value !== null ? ((value as { '#text'?: unknown })['#text'] ?? '') : (value ?? ''),
  );

/** A SOAP fault as BDMSL sends it: the kind in the `detail` element's name, the code in the `faultstring`'s `[ERR-nnn]`. */
function faultError(fault: { faultstring?: unknown; faultcode?: unknown; detail?: unknown }): SmlError {
  const detail = typeof fault.detail === 'object' && fault.detail !== null ? Object.keys(fault.detail) : [];
  const code = textOf(fault.faultcode);
  const kind =
    SML_FAULTS.find((name) => detail.includes(name)) ?? (CLIENT_FAULT_CODE.test(code) ? 'soap:Client' : undefined);
  const text = textOf(fault.faultstring);
  return new SmlError(`SML fault ${kind ?? code}: ${text}`, kind, /^\s*\[(ERR-\d+)\]/.exec(text)?.[1]);
}

/** SOAP 1.1's `Client` fault code (any prefix, any dotted refinement such as `Client.Authentication`). */
const CLIENT_FAULT_CODE = /^(?:[^:]*:)?Client(?:\.|$)/;

/**
 * A call that did not reach a readable answer: a failed connection, a timeout, an answer too large. Its message is
 * shown to providers, so it names no address; `detail` (the socket's message) is for the log.
 */
class SmlCallError extends SmlError {
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(`SML ${message}`);
  }
}
