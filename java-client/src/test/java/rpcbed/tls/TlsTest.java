package rpcbed.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Arrays;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TlsTest {
    @TempDir
    Path dir;

    private String write(String name, String label, byte[] der) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, "junk before\n-----BEGIN " + label + "-----\n"
            + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der) + "\n-----END " + label + "-----\n",
            StandardCharsets.US_ASCII);
        return p.toString();
    }

    /** The OCTET STRING a PKCS#8 PrivateKeyInfo wraps: the SEC 1 or PKCS#1 key. */
    static byte[] inner(byte[] pkcs8) {
        // SEQUENCE header
        int i = (pkcs8[1] & 0x80) == 0 ? 2 : 2 + (pkcs8[1] & 0x7f);
        // version INTEGER 0
        i += 3;
        // AlgorithmIdentifier SEQUENCE (short form here)
        i += 2 + (pkcs8[i + 1] & 0xff);
        // OCTET STRING
        int lenByte = pkcs8[i + 1] & 0xff;
        int len;
        int start;
        if (lenByte < 0x80) {
            len = lenByte;
            start = i + 2;
        } else {
            int n = lenByte & 0x7f;
            len = 0;
            for (int k = 0; k < n; k++) {
                len = len << 8 | (pkcs8[i + 2 + k] & 0xff);
            }
            start = i + 2 + n;
        }
        return Arrays.copyOfRange(pkcs8, start, start + len);
    }

    @Test
    void ecKeysInPkcs8AndSec1() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        PrivateKey k = g.generateKeyPair().getPrivate();
        PrivateKey a = Pem.privateKey(write("a.key", "PRIVATE KEY", k.getEncoded()));
        assertEquals("EC", a.getAlgorithm());
        assertArrayEquals(k.getEncoded(), a.getEncoded());
        PrivateKey b = Pem.privateKey(write("b.key", "EC PRIVATE KEY", inner(k.getEncoded())));
        assertEquals("EC", b.getAlgorithm());
        assertEquals(((java.security.interfaces.ECPrivateKey) k).getS(), ((java.security.interfaces.ECPrivateKey) b).getS());
        // pkcs8Pem gives back a PEM the reader takes
        Path c = dir.resolve("c.key");
        Files.write(c, Pem.pkcs8Pem(k));
        assertArrayEquals(k.getEncoded(), Pem.privateKey(c.toString()).getEncoded());
    }

    @Test
    void rsaKeysInPkcs8AndPkcs1() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        PrivateKey k = g.generateKeyPair().getPrivate();
        assertEquals("RSA", Pem.privateKey(write("a.key", "PRIVATE KEY", k.getEncoded())).getAlgorithm());
        PrivateKey b = Pem.privateKey(write("b.key", "RSA PRIVATE KEY", inner(k.getEncoded())));
        assertEquals(((java.security.interfaces.RSAPrivateKey) k).getPrivateExponent(),
            ((java.security.interfaces.RSAPrivateKey) b).getPrivateExponent());
    }

    @Test
    void badFilesNameTheFile() throws Exception {
        Path empty = dir.resolve("empty.pem");
        Files.writeString(empty, "nothing here");
        IOException e = assertThrows(IOException.class, () -> Pem.privateKey(empty.toString()));
        assertTrue(e.getMessage().contains("empty.pem"), e.getMessage());
        String key = write("k.pem", "PRIVATE KEY", new byte[] {1, 2, 3});
        assertThrows(IOException.class, () -> Pem.certificates(key));
        Path cut = dir.resolve("cut.pem");
        Files.writeString(cut, "-----BEGIN CERTIFICATE-----\nAAAA\n");
        e = assertThrows(IOException.class, () -> Pem.certificates(cut.toString()));
        assertTrue(e.getMessage().contains("-----END CERTIFICATE-----"), e.getMessage());
    }

    @Test
    void protocols() {
        assertArrayEquals(new String[] {"TLSv1.3"}, ServerTls.protocols("1.3"));
        assertArrayEquals(new String[] {"TLSv1.3", "TLSv1.2"}, ServerTls.protocols("1.2"));
    }

    @Test
    void handshakeDeadline() throws Exception {
        SSLContext plain = SSLContext.getInstance("TLS");
        plain.init(null, null, null);
        ByteBuffer out = ByteBuffer.allocate(32 << 10);
        // Within its deadline an engine makes its ClientHello as the inner one would.
        SSLEngine ok = HandshakeDeadline.wrap(plain, 10_000).createSSLEngine("localhost", 443);
        ok.setUseClientMode(true);
        SSLEngineResult r = ok.wrap(ByteBuffer.allocate(0), out);
        assertTrue(r.bytesProduced() > 0, "no ClientHello produced");
        assertEquals(0x16, out.get(0));
        // Past it, the handshake does not go on.
        SSLEngine late = HandshakeDeadline.wrap(plain, 0).createSSLEngine("localhost", 443);
        late.setUseClientMode(true);
        Thread.sleep(2);
        SSLException e = assertThrows(SSLException.class, () -> late.wrap(ByteBuffer.allocate(0), ByteBuffer.allocate(32 << 10)));
        assertTrue(e.getMessage().contains("deadline"), e.getMessage());
    }
}
