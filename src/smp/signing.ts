import { createPrivateKey, type KeyObject } from 'node:crypto';
import { SignedXml } from 'xml-crypto';

export const DS_NS = 'http://www.w3.org/2000/09/xmldsig#';
export const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
export const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
export const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';

// Parsing the PEM on every signature costs time the RSA operation does not need; the key rarely changes.
const parsedKeys = new Map<string, KeyObject>();

export function parsedKey(privateKeyPem: string): KeyObject {
  let key = parsedKeys.get(privateKeyPem);
  if (!key) {
    key = createPrivateKey(privateKeyPem);
    parsedKeys.set(privateKeyPem, key);
  }
  return key;
}

// xml-crypto's own KeyInfo content, made once per certificate: making it parses the certificate, a tenth of a signature.
const keyInfoContents = new Map<string, string | null>();

export function keyInfoContentOf(certificatePem: string, prefix: string | null | undefined): string | null {
  const key = `${prefix ?? ''} ${certificatePem}`;
  let content = keyInfoContents.get(key);
  if (content === undefined) {
    content = SignedXml.getKeyInfoContent({ publicCert: certificatePem, prefix });
    keyInfoContents.set(key, content);
  }
  return content;
}

/**
 * Signs a whole document as the Peppol SMP specification 1.4 requires: an enveloped `ds:Signature` appended as the
 * root's last child, inclusive C14N 1.0, RSA-SHA256, one `Reference URI=""` (enveloped-signature transform, then
 * C14N) with a SHA-256 digest, and the certificate in `KeyInfo/X509Data/X509Certificate`.
 *
 * xml-crypto's signature of any document: the service metadata is signed from its template (signed-metadata.ts),
 * which test/smp/signed-metadata.test.ts proves writes the bytes this writes, and bench/signing.ts measures beside it.
 */
export function signDocument(xml: string, privateKeyPem: string, certificatePem: string): string {
  const signature = new SignedXml({
    privateKey: parsedKey(privateKeyPem),
    publicCert: certificatePem,
    getKeyInfoContent: (args) => keyInfoContentOf(certificatePem, args?.prefix),
    canonicalizationAlgorithm: C14N,
    signatureAlgorithm: RSA_SHA256,
  });
  signature.addReference({ xpath: '/*', transforms: [ENVELOPED, C14N], digestAlgorithm: SHA256, isEmptyUri: true });
  signature.computeSignature(xml, { prefix: 'ds', location: { reference: '/*', action: 'append' } });
  return signature.getSignedXml();
}
