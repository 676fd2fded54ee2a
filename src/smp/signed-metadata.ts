import { createHash, sign } from 'node:crypto';
import { PEPPOL_IDENTIFIERS_NS, type QualifiedIdentifier } from '../core/schemas.js';
import { xmlCarriable } from '../core/xml-text.js';
import { C14N, DS_NS, ENVELOPED, keyInfoContentOf, parsedKey, RSA_SHA256, SHA256 } from './signing.js';
import type { SigningKeyPems } from './signing-pool.js';
import { SMP_NS, WSA_NS, XML_DECLARATION, type PublishedEndpoint, type PublishedProcess } from './xml.js';

/*
 * The SignedServiceMetadata written from a template in two forms at once: as served, and canonical (inclusive C14N
 * 1.0, the signature's canonicalization and its reference's last transform). The digest is the canonical form's, with
 * no signature in it (what the enveloped-signature transform leaves); the RSA signature is over a SignedInfo written
 * canonical. This is no canonicalizer: it writes the canonical bytes of its own documents only, and the bytes served
 * are xml-crypto's for the same document (signDocument, signing.ts), as test/smp/signed-metadata.test.ts proves.
 *
 * The two forms differ in the root's namespace declarations (C14N sorts them by prefix), in elements without content
 * (`<a/>` served, `<a></a>` canonical) and in escaping:
 * - served, as xmldom writes the document xml-crypto signs (and xml-crypto its carriage returns in text): text `&`,
 *   `<`, `>` and `\r`; attributes those, `"`, tab and line feed. And U+0085 and U+2028 as references everywhere:
 *   xmldom reads them raw as line ends (XML 1.1's rule, not 1.0's), so no other spelling carries them to an xmldom
 *   reader, xml-crypto's verifier included;
 * - canonical, as C14N 1.0 writes it: text `&`, `<`, `>` and `\r`; attributes `&`, `<`, `"`, tab, line feed and `\r`.
 */

/** Replaces each character of `references` by its reference. */
function escaper(references: Readonly<Record<string, string>>): (text: string) => string {
  // The characters are none that a character class gives a meaning to.
  const characters = new RegExp(`[${Object.keys(references).join('')}]`, 'g');
  const reference = (character: string) => references[character] ?? character;
  return (text) => text.replace(characters, reference);
}

const XML_1_1_LINE_ENDS = { '\u0085': '&#x85;', '\u2028': '&#x2028;' };
const ESCAPED = {
  servedText: escaper({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;', ...XML_1_1_LINE_ENDS }),
  servedAttribute: escaper({
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    '\t': '&#9;',
    '\n': '&#10;',
    '\r': '&#13;',
    ...XML_1_1_LINE_ENDS,
  }),
  canonicalText: escaper({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' }),
  canonicalAttribute: escaper({
    '&': '&amp;',
    '<': '&lt;',
    '"': '&quot;',
    '\t': '&#x9;',
    '\n': '&#xA;',
    '\r': '&#xD;',
  }),
};

/** The document as served and as canonical, written side by side. */
class Forms {
  served = '';
  canonical = '';

  /** Markup both forms write alike. */
  both(markup: string): this {
    this.served += markup;
    this.canonical += markup;
    return this;
  }

  /** `<name`, and its one attribute if given. */
  start(name: string, attribute?: { name: string; value: string }): this {
    this.both(`<${name}`);
    if (!attribute) return this;
    const value = xmlCarriable(attribute.value);
    this.served += ` ${attribute.name}="${ESCAPED.servedAttribute(value)}"`;
    this.canonical += ` ${attribute.name}="${ESCAPED.canonicalAttribute(value)}"`;
    return this;
  }

  /** Ends a started element that has no content: C14N writes its end tag, xmldom an empty-element tag. */
  empty(name: string): this {
    this.served += '/>';
    this.canonical += `></${name}>`;
    return this;
  }

  /** An element with `text` as its content (escaped here). */
  textElement(name: string, text: string, attribute?: { name: string; value: string }): this {
    this.start(name, attribute);
    if (text === '') return this.empty(name);
    const value = xmlCarriable(text);
    this.served += `>${ESCAPED.servedText(value)}</${name}>`;
    this.canonical += `>${ESCAPED.canonicalText(value)}</${name}>`;
    return this;
  }

  /** An element listing `items`, each written by `write`. */
  list<T>(name: string, items: readonly T[], write: (item: T) => void): this {
    if (items.length === 0) return this.start(name).empty(name);
    this.both(`<${name}>`);
    for (const item of items) write(item);
    return this.both(`</${name}>`);
  }
}

const identifierElement = (forms: Forms, name: string, id: QualifiedIdentifier) =>
  forms.textElement(name, id.value, { name: 'scheme', value: id.scheme });

function endpointElement(forms: Forms, endpoint: PublishedEndpoint): void {
  forms
    .start('smp:Endpoint', { name: 'transportProfile', value: endpoint.transportProfile })
    .both('><wsa:EndpointReference>')
    .textElement('wsa:Address', endpoint.url)
    .both('</wsa:EndpointReference>')
    .textElement('smp:RequireBusinessLevelSignature', String(endpoint.requireBusinessLevelSignature));
  if (endpoint.activationDate) forms.textElement('smp:ServiceActivationDate', endpoint.activationDate);
  if (endpoint.expirationDate) forms.textElement('smp:ServiceExpirationDate', endpoint.expirationDate);
  forms
    .textElement('smp:Certificate', endpoint.certificate)
    .textElement('smp:ServiceDescription', endpoint.serviceDescription)
    .textElement('smp:TechnicalContactUrl', endpoint.technicalContactUrl)
    .both('</smp:Endpoint>');
}

const ROOT = 'smp:SignedServiceMetadata';
// C14N writes the namespace declarations sorted by prefix, xmldom in the document's order.
const SERVED_ROOT = `<${ROOT} xmlns:smp="${SMP_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}" xmlns:wsa="${WSA_NS}">`;
const CANONICAL_ROOT = `<${ROOT} xmlns:ids="${PEPPOL_IDENTIFIERS_NS}" xmlns:smp="${SMP_NS}" xmlns:wsa="${WSA_NS}">`;

/** The document without its signature and without the root's end tag, in both forms. */
function unsignedForms(
  participant: QualifiedIdentifier,
  documentType: QualifiedIdentifier,
  processes: readonly PublishedProcess[],
): Forms {
  const forms = new Forms();
  forms.served = SERVED_ROOT;
  forms.canonical = CANONICAL_ROOT;
  forms.both('<smp:ServiceMetadata><smp:ServiceInformation>');
  identifierElement(forms, 'ids:ParticipantIdentifier', participant);
  identifierElement(forms, 'ids:DocumentIdentifier', documentType);
  forms.list('smp:ProcessList', processes, ({ process, endpoints }) => {
    identifierElement(forms.both('<smp:Process>'), 'ids:ProcessIdentifier', process);
    forms
      .list('smp:ServiceEndpointList', endpoints, (endpoint) => endpointElement(forms, endpoint))
      .both('</smp:Process>');
  });
  return forms.both('</smp:ServiceInformation></smp:ServiceMetadata>');
}

/**
 * The SignedInfo up to its digest value and after it, in both forms: canonical, it declares every namespace in scope
 * at the signature (inclusive C14N of a document subset), sorted by prefix.
 */
const SIGNED_INFO = (() => {
  const forms = new Forms();
  forms.served = '<ds:SignedInfo>';
  forms.canonical = `<ds:SignedInfo xmlns:ds="${DS_NS}" xmlns:ids="${PEPPOL_IDENTIFIERS_NS}" xmlns:smp="${SMP_NS}" xmlns:wsa="${WSA_NS}">`;
  const method = (name: string, algorithm: string) =>
    forms.start(`ds:${name}`, { name: 'Algorithm', value: algorithm }).empty(`ds:${name}`);
  method('CanonicalizationMethod', C14N);
  method('SignatureMethod', RSA_SHA256);
  forms.both('<ds:Reference URI=""><ds:Transforms>');
  method('Transform', ENVELOPED);
  method('Transform', C14N);
  forms.both('</ds:Transforms>');
  method('DigestMethod', SHA256);
  const before = { served: `${forms.served}<ds:DigestValue>`, canonical: `${forms.canonical}<ds:DigestValue>` };
  return { before, after: '</ds:DigestValue></ds:Reference></ds:SignedInfo>' };
})();

/**
 * The signed answer of a service metadata lookup, byte for byte what `signDocument(serviceMetadataXml(...))` makes
 * (up to U+0085 and U+2028, above), at the cost of a SHA-256 of the canonical document and one RSA signature.
 */
export function signedServiceMetadata(
  participant: QualifiedIdentifier,
  documentType: QualifiedIdentifier,
  processes: readonly PublishedProcess[],
  key: SigningKeyPems,
): string {
  const forms = unsignedForms(participant, documentType, processes);
  const end = `</${ROOT}>`;
  const digest = createHash('sha256')
    .update(forms.canonical + end)
    .digest('base64');
  const signedInfo = Buffer.from(SIGNED_INFO.before.canonical + digest + SIGNED_INFO.after);
  const signatureValue = sign('sha256', signedInfo, parsedKey(key.privateKeyPem)).toString('base64');
  const keyInfo = keyInfoContentOf(key.certificatePem, 'ds');
  return (
    `${XML_DECLARATION}${forms.served}<ds:Signature xmlns:ds="${DS_NS}">${SIGNED_INFO.before.served}${digest}${SIGNED_INFO.after}` +
    `<ds:SignatureValue>${signatureValue}</ds:SignatureValue>${keyInfo ? `<ds:KeyInfo>${keyInfo}</ds:KeyInfo>` : ''}</ds:Signature>${end}`
  );
}
