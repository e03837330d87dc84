package rpcbed.tls;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * A client's TLS settings (-security tls|mtls, -cacert, -cert/-key, -servername,
 * -tls-version, -resume) and what its handshakes negotiated, for the report's "TLS:"
 * and "TLS handshakes:" lines. The server's certificate must chain to -cacert and carry
 * -servername (the host of -addr by default), checked as HTTPS clients check it.
 */
public final class ClientTls {
    public final boolean mutual;
    public final X509Certificate[] cas;
    public final PrivateKey key;
    public final X509Certificate[] chain;
    public final String serverName;
    /** "1.3" or "1.2": the only version offered. */
    public final String version;
    /** Session resumption: the library's default (true) or off (a new session cache per connection). */
    public final boolean resume;

    private final SSLContext shared;
    private final AtomicLong handshakes = new AtomicLong();
    private final AtomicLong resumed = new AtomicLong();
    private volatile String protocol = "-";
    private volatile String cipher = "-";
    private volatile String alpn = "none";
    /** The server asked for a client certificate this client does not have. */
    private volatile boolean certificateAsked;

    private ClientTls(boolean mutual, X509Certificate[] cas, PrivateKey key, X509Certificate[] chain,
            String serverName, String version, boolean resume) throws GeneralSecurityException {
        this.mutual = mutual;
        this.cas = cas;
        this.key = key;
        this.chain = chain;
        this.serverName = serverName;
        this.version = version;
        this.resume = resume;
        managers();
        this.shared = newContext();
    }

    /** Reads the files; an unreadable one is an IOException naming it. */
    public static ClientTls load(String security, String caFile, String certFile, String keyFile, String serverName,
            String version, boolean resume) throws IOException, GeneralSecurityException {
        boolean mutual = security.equals("mtls");
        X509Certificate[] cas = Pem.certificates(caFile);
        PrivateKey key = mutual ? Pem.privateKey(keyFile) : null;
        X509Certificate[] chain = mutual ? Pem.certificates(certFile) : null;
        return new ClientTls(mutual, cas, key, chain, serverName, version, resume);
    }

    public String[] protocols() {
        return new String[] {version.equals("1.2") ? "TLSv1.2" : "TLSv1.3"};
    }

    /**
     * The JDK's TLS with -cacert as the only trust and, for mtls, the client certificate:
     * a context of its own (its own session cache) over the key and trust managers made
     * once (a PKCS#12 key entry costs PBKDF2 rounds that -resume off must not time on
     * every connection).
     */
    public SSLContext newContext() throws GeneralSecurityException {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(keyManagers, trustManagers, new SecureRandom());
        return ctx;
    }

    private javax.net.ssl.KeyManager[] keyManagers;
    private javax.net.ssl.TrustManager[] trustManagers;

    /** Makes the key and trust managers every context of this client shares. */
    private void managers() throws GeneralSecurityException {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        char[] pw = new char[0];
        try {
            trust.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        for (int i = 0; i < cas.length; i++) {
            trust.setCertificateEntry("ca" + i, cas[i]);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        // Without a client certificate, a key manager that has none but notes that the
        // server asked for one: a server that then drops the connection without an alert
        // (the JDK's HttpsServer) refused the client for want of a certificate.
        javax.net.ssl.KeyManager[] kms = {new javax.net.ssl.X509ExtendedKeyManager() {
            @Override
            public String chooseClientAlias(String[] keyType, java.security.Principal[] issuers, Socket socket) {
                certificateAsked = true;
                return null;
            }

            @Override
            public String chooseEngineClientAlias(String[] keyType, java.security.Principal[] issuers, javax.net.ssl.SSLEngine e) {
                certificateAsked = true;
                return null;
            }

            @Override
            public String[] getClientAliases(String keyType, java.security.Principal[] issuers) {
                return null;
            }

            @Override
            public String[] getServerAliases(String keyType, java.security.Principal[] issuers) {
                return null;
            }

            @Override
            public String chooseServerAlias(String keyType, java.security.Principal[] issuers, Socket socket) {
                return null;
            }

            @Override
            public X509Certificate[] getCertificateChain(String alias) {
                return null;
            }

            @Override
            public PrivateKey getPrivateKey(String alias) {
                return null;
            }
        }};
        if (mutual) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try {
                ks.load(null, null);
            } catch (IOException e) {
                throw new GeneralSecurityException(e);
            }
            ks.setKeyEntry("key", key, pw, chain);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            kms = kmf.getKeyManagers();
        }
        keyManagers = kms;
        trustManagers = tmf.getTrustManagers();
    }

    /** The context of one connection: the shared one (sessions resumable), or a new one with -resume off. */
    public SSLContext context() throws GeneralSecurityException {
        return resume ? shared : newContext();
    }

    /** Parameters of a JDK client socket or engine: the version, the name checked, SNI. */
    public SSLParameters parameters(SSLContext ctx, String... alpn) {
        SSLParameters p = ctx.getDefaultSSLParameters();
        p.setProtocols(protocols());
        p.setEndpointIdentificationAlgorithm("HTTPS");
        if (!isIp(serverName)) {
            p.setServerNames(List.of(new SNIHostName(serverName)));
        }
        if (alpn.length > 0) {
            p.setApplicationProtocols(alpn);
        }
        return p;
    }

    static boolean isIp(String host) {
        return host.matches("[0-9.]+") || host.contains(":");
    }

    /**
     * Connects a JDK TLS socket to host:port within timeoutMillis and completes the
     * handshake; the socket checks the server's name as -servername.
     */
    public SSLSocket connect(String host, int port, int timeoutMillis, String... alpn) throws IOException {
        SSLContext ctx;
        try {
            ctx = context();
        } catch (GeneralSecurityException e) {
            throw new IOException("TLS context: " + e.getMessage(), e);
        }
        Socket plain = new Socket();
        try {
            plain.setTcpNoDelay(true);
            plain.connect(new InetSocketAddress(InetAddress.getByName(host), port), timeoutMillis);
            plain.setSoTimeout(timeoutMillis);
            SSLSocket s = (SSLSocket) ctx.getSocketFactory().createSocket(plain, serverName, port, true);
            s.setSSLParameters(parameters(ctx, alpn));
            long start = System.currentTimeMillis();
            s.startHandshake();
            handshake(s.getSession(), s.getApplicationProtocol(), start);
            return s;
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /**
     * Counts a completed handshake and keeps what it negotiated. A session created before
     * the handshake started was resumed (the JDK and OpenSSL give a resumed session its
     * first handshake's creation time).
     */
    public void handshake(SSLSession s, String applicationProtocol, long startMillis) {
        handshakes.incrementAndGet();
        if (s.getCreationTime() < startMillis) {
            resumed.incrementAndGet();
        }
        protocol = s.getProtocol();
        cipher = s.getCipherSuite();
        alpn = applicationProtocol == null || applicationProtocol.isEmpty() ? "none" : applicationProtocol;
    }

    private volatile Throwable lastFailure;

    /**
     * Keeps a handshake's failure for the verify step's message: a library that drops
     * the connection without passing the cause on (Dubbo) still has its cause named.
     */
    public <T extends Throwable> T failed(T e) {
        lastFailure = e;
        return e;
    }

    /** The last handshake failure an engine of ClientEngines saw, or null. */
    public Throwable lastFailure() {
        return lastFailure;
    }

    public long handshakes() {
        return handshakes.get();
    }

    public long resumed() {
        return resumed.get();
    }

    /**
     * The "TLS:" line's value: version, cipher suite, group, ALPN. The key exchange group
     * is "-": neither the JDK's SSLSession nor Netty's OpenSSL session tells it.
     */
    public String line() {
        return protocol + " " + cipher + " - ALPN=" + alpn;
    }

    /** Records a negotiated session without counting a handshake (the library counted it). */
    public void negotiated(String protocol, String cipher, String alpn) {
        this.protocol = protocol;
        this.cipher = cipher;
        this.alpn = alpn == null || alpn.isEmpty() ? "none" : alpn;
    }

    /**
     * After a failure with no certificate problem in it: a new connection that reads for
     * up to waitMillis after its handshake, so that a TLS 1.3 server's refusal of the
     * client certificate (an alert sent after the client's handshake is done, which a
     * request write can meet as a broken pipe first) shows. The cause, or null.
     * Only after a verify failure: never in a measured run.
     */
    public String probe(String host, int port, int timeoutMillis, int waitMillis) {
        try (SSLSocket s = connect(host, port, timeoutMillis)) {
            s.setSoTimeout(waitMillis);
            // One byte makes a server that reads lazily (the JDK's HttpsServer) take the
            // client's last handshake flight and answer it; a server that accepted the
            // certificate just sees a stray byte on a connection about to close.
            s.getOutputStream().write('\n');
            s.getOutputStream().flush();
            // A server that drops the connection right after a handshake that asked
            // for a certificate (or took ours, with mtls) refused it: the JDK's
            // HttpsServer and IceSSL close without the alert reaching the client.
            if (s.getInputStream().read() < 0 && (certificateAsked || mutual)) {
                return "client certificate refused";
            }
            return null;
        } catch (java.net.SocketTimeoutException e) {
            return null;
        } catch (IOException e) {
            String c = cause(e);
            return c == null && (certificateAsked || mutual) ? "client certificate refused" : c;
        }
    }

    /**
     * The certificate problem in a failure's causes, named as go-client and php-client
     * name it: "unknown CA", "expired certificate", "wrong name", "client certificate
     * refused"; null when the failure is none of these.
     */
    public static String cause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            // An alert the server sent is about the client's certificate (the client's
            // own verdict on the server's is a local exception, below): the JDK says
            // "Received fatal alert: unknown_ca", BoringSSL "TLSV1_ALERT_UNKNOWN_CA".
            String a = String.valueOf(t.getMessage());
            if (a.contains("Received fatal alert: unknown_ca") || a.contains("ALERT_UNKNOWN_CA")
                    || a.contains("Received fatal alert: bad_certificate") || a.contains("ALERT_BAD_CERTIFICATE")
                    || a.contains("Received fatal alert: certificate_unknown") || a.contains("ALERT_CERTIFICATE_UNKNOWN")
                    || a.contains("Received fatal alert: certificate_required") || a.contains("ALERT_CERTIFICATE_REQUIRED")) {
                return "client certificate refused";
            }
        }
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertificateExpiredException || t instanceof CertificateNotYetValidException) {
                return "expired certificate";
            }
            String m = String.valueOf(t.getMessage());
            if (m.contains("No subject alternative") || m.contains("No name matching")) {
                return "wrong name";
            }
            if (m.contains("validity check failed") || m.contains("NotAfter") || m.contains("certificate expired")) {
                return "expired certificate";
            }
            if (m.contains("unable to find valid certification path") || m.contains("PKIX path building failed")) {
                return "unknown CA";
            }
            if (m.contains("certificate_required") || m.contains("bad_certificate") || m.contains("CERTIFICATE_REQUIRED")
                    || m.contains("BAD_CERTIFICATE")) {
                return "client certificate refused";
            }
        }
        return null;
    }
}
