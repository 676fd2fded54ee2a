import java.io.File;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Key;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.crypto.AlgorithmMethod;
import javax.xml.crypto.KeySelector;
import javax.xml.crypto.KeySelectorException;
import javax.xml.crypto.KeySelectorResult;
import javax.xml.crypto.XMLCryptoContext;
import javax.xml.crypto.dsig.Reference;
import javax.xml.crypto.dsig.XMLSignature;
import javax.xml.crypto.dsig.XMLSignatureFactory;
import javax.xml.crypto.dsig.dom.DOMValidateContext;
import javax.xml.crypto.dsig.keyinfo.KeyInfo;
import javax.xml.crypto.dsig.keyinfo.X509Data;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * The JDK's XML signature (javax.xml.crypto.dsig, secure validation on) verifying signed SMP answers, as a Java access
 * point would: `java VerifySignatures.java <list>`, where each line of the list is `<signed XML file> <trusted
 * certificate PEM file>`. Prints `valid <file>` or `invalid <file>: <why>` for each line.
 *
 * An answer is valid when its one signature, the root element's last child, has one reference to the whole document
 * (`URI=""`) and verifies with the trusted certificate's key, and its KeyInfo certificate is the trusted one.
 */
public class VerifySignatures {
  public static void main(String[] args) throws Exception {
    DocumentBuilderFactory parsers = DocumentBuilderFactory.newInstance();
    parsers.setNamespaceAware(true);
    parsers.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
    parsers.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    XMLSignatureFactory signatures = XMLSignatureFactory.getInstance("DOM");
    CertificateFactory certificates = CertificateFactory.getInstance("X.509");
    for (String line : Files.readAllLines(Path.of(args[0]))) {
      String[] files = line.split(" ");
      X509Certificate trusted;
      try (InputStream pem = new FileInputStream(files[1])) {
        trusted = (X509Certificate) certificates.generateCertificate(pem);
      }
      String fault;
      try {
        fault = faultOf(parsers.newDocumentBuilder().parse(new File(files[0])), trusted, signatures);
      } catch (Exception error) {
        fault = error.toString();
      }
      System.out.println(fault == null ? "valid " + files[0] : "invalid " + files[0] + ": " + fault.replace('\n', ' '));
    }
  }

  /** Why the document's signature is not valid, or null when it is. */
  static String faultOf(Document document, X509Certificate trusted, XMLSignatureFactory signatures) throws Exception {
    NodeList found = document.getElementsByTagNameNS(XMLSignature.XMLNS, "Signature");
    if (found.getLength() != 1) return found.getLength() + " signatures";
    Node signatureElement = found.item(0);
    if (signatureElement.getParentNode() != document.getDocumentElement() || signatureElement.getNextSibling() != null) {
      return "the signature is not the root element's last child";
    }
    DOMValidateContext context = new DOMValidateContext(new TrustedKey(trusted), signatureElement);
    context.setProperty("org.jcp.xml.dsig.secureValidation", Boolean.TRUE);
    XMLSignature signature = signatures.unmarshalXMLSignature(context);
    List<?> references = signature.getSignedInfo().getReferences();
    if (references.size() != 1 || !"".equals(((Reference) references.get(0)).getURI())) return "not one reference to the whole document";
    if (signature.validate(context)) return null;
    boolean digestValid = ((Reference) references.get(0)).validate(context);
    return "signature value " + (signature.getSignatureValue().validate(context) ? "valid" : "invalid") + ", digest " + (digestValid ? "valid" : "invalid");
  }

  /** The trusted certificate's key, only where the KeyInfo names that certificate. */
  static class TrustedKey extends KeySelector {
    private final X509Certificate trusted;

    TrustedKey(X509Certificate trusted) {
      this.trusted = trusted;
    }

    @Override
    public KeySelectorResult select(KeyInfo keyInfo, KeySelector.Purpose purpose, AlgorithmMethod method, XMLCryptoContext context)
        throws KeySelectorException {
      if (keyInfo != null) {
        for (Object content : keyInfo.getContent()) {
          if (!(content instanceof X509Data data)) continue;
          for (Object certificate : data.getContent()) {
            if (trusted.equals(certificate)) return () -> (Key) trusted.getPublicKey();
          }
        }
      }
      throw new KeySelectorException("the KeyInfo does not hold the trusted certificate");
    }
  }
}
