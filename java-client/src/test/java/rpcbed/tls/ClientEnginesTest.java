package rpcbed.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Security;
import java.security.cert.X509Certificate;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * ClientEngines and EngineProvider: the client engines IceSSL and Dubbo are handed.
 * A self-signed ECDSA certificate for localhost and 127.0.0.1 (made by the JDK's
 * keytool) serves as the server's certificate and its own CA; the handshakes run
 * between two SSLEngines in memory.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientEnginesTest {
    @TempDir
    static Path dir;

    private String cert;
    private String key;

    @BeforeAll
    void certificate() throws Exception {
        Path ks = dir.resolve("server.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "s", "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", "CN=rpcbed test", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2",
            "-keystore", ks.toString(), "-storetype", "PKCS12", "-storepass", "secret")
            .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool still running");
        assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes()));
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (FileInputStream in = new FileInputStream(ks.toFile())) {
            store.load(in, "secret".toCharArray());
        }
        X509Certificate c = (X509Certificate) store.getCertificate("s");
        PrivateKey k = (PrivateKey) store.getKey("s", "secret".toCharArray());
        cert = dir.resolve("server.pem").toString();
        key = dir.resolve("server.key").toString();
        Files.write(Path.of(cert), Pem.pem(new X509Certificate[] {c}));
        Files.write(Path.of(key), Pem.pkcs8Pem(k));
    }

    private ClientTls client(String serverName, String version, boolean resume) throws Exception {
        return ClientTls.load("tls", cert, "", "", serverName, version, resume);
    }

    private SSLEngine server(SSLContext ctx) {
        SSLEngine e = ctx.createSSLEngine();
        e.setUseClientMode(false);
        e.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
        return e;
    }

    /** Runs a handshake between two engines in memory; the exception either side threw. */
    static void handshake(SSLEngine client, SSLEngine server) throws SSLException {
        ByteBuffer empty = ByteBuffer.allocate(0);
        ByteBuffer toServer = ByteBuffer.allocate(64 << 10);
        ByteBuffer toClient = ByteBuffer.allocate(64 << 10);
        ByteBuffer sink = ByteBuffer.allocate(64 << 10);
        client.beginHandshake();
        server.beginHandshake();
        for (int i = 0; i < 200; i++) {
            boolean cDone = done(client);
            boolean sDone = done(server);
            if (cDone && sDone) {
                return;
            }
            step(client, empty, toServer, toClient, sink);
            step(server, empty, toClient, toServer, sink);
        }
        throw new AssertionError("handshake did not end within 200 steps");
    }

    private static boolean done(SSLEngine e) {
        HandshakeStatus s = e.getHandshakeStatus();
        return s == HandshakeStatus.NOT_HANDSHAKING || s == HandshakeStatus.FINISHED;
    }

    /** One engine's turn: runs its tasks, writes what it has to send, reads what it was sent. */
    private static void step(SSLEngine e, ByteBuffer empty, ByteBuffer out, ByteBuffer in, ByteBuffer sink) throws SSLException {
        Runnable task;
        while ((task = e.getDelegatedTask()) != null) {
            task.run();
        }
        SSLEngineResult r;
        do {
            r = e.wrap(empty, out);
        } while (r.bytesProduced() > 0 && e.getHandshakeStatus() == HandshakeStatus.NEED_WRAP);
        in.flip();
        while (in.hasRemaining()) {
            r = e.unwrap(in, sink);
            sink.clear();
            while ((task = e.getDelegatedTask()) != null) {
                task.run();
            }
            if (r.getStatus() != SSLEngineResult.Status.OK || r.bytesConsumed() == 0) {
                break;
            }
        }
        in.compact();
    }

    @Test
    void enginesOfferOnlyTheVersionAndCountHandshakes() throws Exception {
        ClientTls tls = client("localhost", "1.2", true);
        SSLContext serverCtx = ServerTls.load(cert, key, null, "1.2").jdkContext();
        SSLContext ctx = ClientEngines.wrap(tls, 20880);
        for (int i = 0; i < 2; i++) {
            // Whatever host the library names, the engine is made for -servername;
            // and whatever versions it enables, only -tls-version is offered.
            SSLEngine c = ctx.createSSLEngine("127.0.0.1", 20880);
            c.setEnabledProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            assertEquals("localhost", c.getPeerHost());
            handshake(c, server(serverCtx));
            assertEquals("TLSv1.2", c.getSession().getProtocol());
        }
        assertEquals(2, tls.handshakes(), "handshakes");
        // One context, its session cache shared: the second handshake resumed the first.
        assertEquals(1, tls.resumed(), "resumed");
        assertTrue(tls.line().startsWith("TLSv1.2 TLS_"), tls.line());
        assertTrue(tls.line().endsWith(" - ALPN=none"), tls.line());
    }

    @Test
    void resumeOffGivesEachEngineItsOwnContext() throws Exception {
        ClientTls tls = client("localhost", "1.2", false);
        SSLContext serverCtx = ServerTls.load(cert, key, null, "1.2").jdkContext();
        SSLContext ctx = ClientEngines.wrap(tls, 20880);
        for (int i = 0; i < 2; i++) {
            handshake(ctx.createSSLEngine(), server(serverCtx));
        }
        assertEquals(2, tls.handshakes(), "handshakes");
        assertEquals(0, tls.resumed(), "resumed with -resume off");
    }

    @Test
    void anotherNameFailsAndTheCauseIsKept() throws Exception {
        ClientTls tls = client("other.example", "1.3", true);
        SSLContext serverCtx = ServerTls.load(cert, key, null, "1.3").jdkContext();
        SSLEngine c = ClientEngines.wrap(tls, 443).createSSLEngine("localhost", 443);
        // A library that sets its own parameters cannot turn the name check off.
        c.setSSLParameters(new javax.net.ssl.SSLParameters());
        assertThrows(SSLException.class, () -> handshake(c, server(serverCtx)));
        assertNotNull(tls.lastFailure(), "the failure kept");
        assertEquals("wrong name", ClientTls.cause(tls.lastFailure()));
        assertEquals(0, tls.handshakes(), "handshakes");
    }

    @Test
    void providerServesTheDefaultTlsForOneRun() throws Exception {
        ClientTls tls = client("localhost", "1.3", true);
        String before = SSLContext.getInstance("TLS").getProvider().getName();
        EngineProvider.install(tls, 20880);
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            assertEquals(EngineProvider.NAME, ctx.getProvider().getName());
            // The library initializes the context with its own trust (Netty: Dubbo's PEM).
            KeyStore trust = KeyStore.getInstance("PKCS12");
            trust.load(null, null);
            trust.setCertificateEntry("ca", tls.cas[0]);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            ctx.init(null, tmf.getTrustManagers(), null);
            SSLEngine c = ctx.createSSLEngine();
            c.setUseClientMode(true);
            handshake(c, server(ServerTls.load(cert, key, null, "1.3").jdkContext()));
            assertEquals("TLSv1.3", c.getSession().getProtocol());
            assertEquals(1, tls.handshakes(), "handshakes");
        } finally {
            EngineProvider.uninstall();
        }
        assertEquals(before, SSLContext.getInstance("TLS").getProvider().getName());
        assertEquals(null, Security.getProvider(EngineProvider.NAME));
        assertNotEquals(EngineProvider.NAME, before);
    }
}
