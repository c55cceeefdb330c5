package io.millrace.transport.netty;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;

/**
 * Checks that a private key belongs to the first certificate of a chain, by signing with the one
 * and verifying with the other. The JDK's TLS would otherwise accept a mismatched pair and fail
 * every handshake; a certificate renewal caught between writing the new certificate and the new key
 * is such a pair, and a reload must refuse it.
 */
final class KeyPairCheck {
  private static final byte[] PROBE = "millrace key pair check".getBytes(StandardCharsets.US_ASCII);

  private KeyPairCheck() {}

  /** The PEM bytes of a certificate chain and of a PKCS#8 key. */
  static void verify(byte[] certificateChain, byte[] privateKey) throws GeneralSecurityException {
    X509Certificate certificate =
        (X509Certificate)
            CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(certificateChain));
    PublicKey publicKey = certificate.getPublicKey();
    PrivateKey key =
        KeyFactory.getInstance(publicKey.getAlgorithm())
            .generatePrivate(new PKCS8EncodedKeySpec(pkcs8(privateKey)));
    String algorithm = "EC".equals(publicKey.getAlgorithm()) ? "SHA256withECDSA" : "SHA256withRSA";
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(PROBE);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    verifier.initVerify(publicKey);
    verifier.update(PROBE);
    if (!verifier.verify(signature)) {
      throw new GeneralSecurityException("the private key does not belong to the certificate");
    }
  }

  /** The DER bytes of a PEM "PRIVATE KEY" (PKCS#8, unencrypted). */
  private static byte[] pkcs8(byte[] pem) throws GeneralSecurityException {
    String text = new String(pem, StandardCharsets.US_ASCII);
    int begin = text.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = text.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < begin) {
      throw new GeneralSecurityException(
          "no unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----) in the key file");
    }
    String body = text.substring(begin + "-----BEGIN PRIVATE KEY-----".length(), end);
    return Base64.getMimeDecoder().decode(body);
  }
}
