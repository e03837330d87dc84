package rpcbed.tls;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * PEM files as the flags name them (certificates, and a private key in PKCS#8, SEC 1
 * "EC PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY" form), read into the JDK's types in
 * memory: no keystore is written anywhere.
 */
public final class Pem {
    private Pem() {}

    /** One PEM block: its label and DER bytes. */
    record Block(String label, byte[] der) {}

    static List<Block> blocks(String file) throws IOException {
        String text = Files.readString(Path.of(file), StandardCharsets.US_ASCII);
        List<Block> out = new ArrayList<>();
        int at = 0;
        while (true) {
            int begin = text.indexOf("-----BEGIN ", at);
            if (begin < 0) {
                break;
            }
            int labelEnd = text.indexOf("-----", begin + 11);
            if (labelEnd < 0) {
                throw new IOException(file + ": unterminated PEM header");
            }
            String label = text.substring(begin + 11, labelEnd);
            String endMark = "-----END " + label + "-----";
            int end = text.indexOf(endMark, labelEnd);
            if (end < 0) {
                throw new IOException(file + ": no \"" + endMark + "\"");
            }
            String body = text.substring(labelEnd + 5, end).replaceAll("\\s", "");
            try {
                out.add(new Block(label, Base64.getDecoder().decode(body)));
            } catch (IllegalArgumentException e) {
                throw new IOException(file + ": " + label + ": bad base64");
            }
            at = end + endMark.length();
        }
        if (out.isEmpty()) {
            throw new IOException(file + ": no PEM block");
        }
        return out;
    }

    /** Every CERTIFICATE block of the file, in order (leaf first for a chain). */
    public static X509Certificate[] certificates(String file) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> certs = new ArrayList<>();
        for (Block b : blocks(file)) {
            if (b.label().equals("CERTIFICATE")) {
                certs.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(b.der())));
            }
        }
        if (certs.isEmpty()) {
            throw new IOException(file + ": no CERTIFICATE block");
        }
        return certs.toArray(new X509Certificate[0]);
    }

    /** The file's private key, whichever of the three usual encodings it is in. */
    public static PrivateKey privateKey(String file) throws IOException, GeneralSecurityException {
        for (Block b : blocks(file)) {
            switch (b.label()) {
                case "PRIVATE KEY" -> {
                    byte[] der = b.der();
                    String alg = algorithmOf(der);
                    return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
                }
                case "EC PRIVATE KEY" -> {
                    return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(pkcs8(EC_P256_ALG, b.der())));
                }
                case "RSA PRIVATE KEY" -> {
                    return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(pkcs8(RSA_ALG, b.der())));
                }
                default -> { }
            }
        }
        throw new IOException(file + ": no PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY block");
    }

    /** The key as PKCS#8 PEM text (what Netty's and Dubbo's PEM readers take). */
    public static byte[] pkcs8Pem(PrivateKey key) {
        String b64 = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(key.getEncoded());
        return ("-----BEGIN PRIVATE KEY-----\n" + b64 + "\n-----END PRIVATE KEY-----\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** Certificates as PEM text. */
    public static byte[] pem(X509Certificate... certs) throws GeneralSecurityException {
        StringBuilder s = new StringBuilder();
        for (X509Certificate c : certs) {
            s.append("-----BEGIN CERTIFICATE-----\n")
                .append(Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(c.getEncoded()))
                .append("\n-----END CERTIFICATE-----\n");
        }
        return s.toString().getBytes(StandardCharsets.US_ASCII);
    }

    // AlgorithmIdentifier DER: id-ecPublicKey with prime256v1; rsaEncryption with NULL.
    private static final byte[] EC_P256_ALG = {
        0x30, 0x13, 0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01,
        0x06, 0x08, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x03, 0x01, 0x07};
    private static final byte[] RSA_ALG = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
    private static final byte[] EC_OID = {0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    /** PrivateKeyInfo ::= SEQUENCE { version 0, algorithm, OCTET STRING key }. */
    static byte[] pkcs8(byte[] alg, byte[] key) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(alg);
        body.writeBytes(tlv(0x04, key));
        return tlv(0x30, body.toByteArray());
    }

    static byte[] tlv(int tag, byte[] v) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        o.write(tag);
        int n = v.length;
        if (n < 0x80) {
            o.write(n);
        } else if (n < 0x100) {
            o.write(0x81);
            o.write(n);
        } else if (n < 0x10000) {
            o.write(0x82);
            o.write(n >> 8);
            o.write(n);
        } else {
            o.write(0x83);
            o.write(n >> 16);
            o.write(n >> 8);
            o.write(n);
        }
        o.writeBytes(v);
        return o.toByteArray();
    }

    /** "EC" when the PKCS#8 algorithm is id-ecPublicKey, else "RSA". */
    static String algorithmOf(byte[] pkcs8) {
        for (int i = 0; i + EC_OID.length <= Math.min(pkcs8.length, 40); i++) {
            boolean match = true;
            for (int j = 0; j < EC_OID.length && match; j++) {
                match = pkcs8[i + j] == EC_OID[j];
            }
            if (match) {
                return "EC";
            }
        }
        return "RSA";
    }
}
