import { XMLBuilder } from 'fast-xml-parser';
import { formatQualifiedIdentifier, PEPPOL_IDENTIFIERS_NS, type QualifiedIdentifier } from '../core/schemas.js';
import { xmlEscaped } from '../core/xml-text.js';

export const SMP_NS = 'http://busdox.org/serviceMetadata/publishing/1.0/';
export const WSA_NS = 'http://www.w3.org/2005/08/addressing';
const BUSINESS_CARD_NS = 'http://www.peppol.eu/schema/pd/businesscard/20180621/';

export interface PublishedEndpoint {
  transportProfile: string;
  url: string;
  certificate: string;
  serviceDescription: string;
  technicalContactUrl: string;
  requireBusinessLevelSignature: boolean;
  activationDate: string | null;
  expirationDate: string | null;
}

export interface PublishedProcess {
  process: QualifiedIdentifier;
  endpoints: PublishedEndpoint[];
}

export interface BusinessEntity {
  name: string | null;
  countryCode: string;
  registrationDate: string;
  /** The organization's identifier within its ICD's scheme (scheme = the ICD). */
  identifier: QualifiedIdentifier;
}

/**
 * Compact output: what is signed is served byte for byte, so nothing may re-indent it. Every value is escaped here
 * (xmlEscaped, core/xml-text.ts), not by the builder: a carriage return must become `&#13;`, or it would be read back
 * as a line feed and the signature over it would no longer verify.
 */
const builder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  suppressEmptyNode: false,
  format: false,
  processEntities: false,
});
const DECLARATION = { '?xml': { '@version': '1.0', '@encoding': 'UTF-8' } };
/** What the builder writes for `DECLARATION`. */
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

const identifier = (id: QualifiedIdentifier) => ({ '@scheme': xmlEscaped(id.scheme), '#text': xmlEscaped(id.value) });

/** The full identifier in a URL path: `scheme::value`, percent-encoded as one segment. */
const pathSegment = (id: QualifiedIdentifier) => encodeURIComponent(formatQualifiedIdentifier(id));

/** A document type as the end of a service group's `href`: its path segment, escaped for the attribute. */
export const hrefSegment = (documentType: QualifiedIdentifier) => xmlEscaped(pathSegment(documentType));

/**
 * `documentTypeSegments`: the `hrefSegment` of each document type listed (service-group.ts), in order.
 *
 * Written from a template rather than by the builder: the service group is the network's most frequent lookup and has
 * one fixed shape, and the builder escaped every `href` twice more (already escaped here) and tracked each node's path,
 * some 30 µs of the main thread per answer of 30 references against 4 µs. The bytes are the builder's: every value
 * goes through `xmlEscaped`, as every value given to the builder does.
 */
export function serviceGroupXml(
  participant: QualifiedIdentifier,
  documentTypeSegments: readonly string[],
  publicBase: string,
): string {
  const participantPath = xmlEscaped(`${publicBase}/${pathSegment(participant)}/services/`);
  let references = '';
  for (const segment of documentTypeSegments) {
    references += `<smp:ServiceMetadataReference href="${participantPath}${segment}"></smp:ServiceMetadataReference>`;
  }
  return (
    `${XML_DECLARATION}<smp:ServiceGroup xmlns:smp="${SMP_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}">` +
    `<ids:ParticipantIdentifier scheme="${xmlEscaped(participant.scheme)}">${xmlEscaped(participant.value)}</ids:ParticipantIdentifier>` +
    `<smp:ServiceMetadataReferenceCollection>${references}</smp:ServiceMetadataReferenceCollection></smp:ServiceGroup>`
  );
}

/** The unsigned `SignedServiceMetadata`: the signature is appended as its last child when signed. */
export function serviceMetadataXml(
  participant: QualifiedIdentifier,
  documentType: QualifiedIdentifier,
  processes: readonly PublishedProcess[],
): string {
  return builder.build({
    ...DECLARATION,
    'smp:SignedServiceMetadata': {
      '@xmlns:smp': SMP_NS,
      '@xmlns:ids': PEPPOL_IDENTIFIERS_NS,
      '@xmlns:wsa': WSA_NS,
      'smp:ServiceMetadata': {
        'smp:ServiceInformation': {
          'ids:ParticipantIdentifier': identifier(participant),
          'ids:DocumentIdentifier': identifier(documentType),
          'smp:ProcessList': {
            'smp:Process': processes.map(({ process, endpoints }) => ({
              'ids:ProcessIdentifier': identifier(process),
              'smp:ServiceEndpointList': { 'smp:Endpoint': endpoints.map(endpointXml) },
            })),
          },
        },
      },
    },
  });
}

function endpointXml(endpoint: PublishedEndpoint) {
  return {
    '@transportProfile': xmlEscaped(endpoint.transportProfile),
    'wsa:EndpointReference': { 'wsa:Address': xmlEscaped(endpoint.url) },
    'smp:RequireBusinessLevelSignature': String(endpoint.requireBusinessLevelSignature),
    ...(endpoint.activationDate ? { 'smp:ServiceActivationDate': endpoint.activationDate } : {}),
    ...(endpoint.expirationDate ? { 'smp:ServiceExpirationDate': endpoint.expirationDate } : {}),
    'smp:Certificate': xmlEscaped(endpoint.certificate),
    'smp:ServiceDescription': xmlEscaped(endpoint.serviceDescription),
    'smp:TechnicalContactUrl': xmlEscaped(endpoint.technicalContactUrl),
  };
}

/** The Peppol Directory business card v3 of one organization. */
export function businessCardXml(participant: QualifiedIdentifier, entity: BusinessEntity): string {
  return builder.build({
    ...DECLARATION,
    BusinessCard: {
      '@xmlns': BUSINESS_CARD_NS,
      ParticipantIdentifier: identifier(participant),
      BusinessEntity: {
        '@registrationDate': entity.registrationDate,
        Name: xmlEscaped(entity.name ?? participant.value),
        CountryCode: entity.countryCode,
        Identifier: identifier(entity.identifier),
      },
    },
  });
}
