package rpcbed.tls;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * A baseline server's TLS settings (-tls-cert, -tls-key, -tls-client-ca, -tls-min), read
 * once from the PEM files into memory. Every listener built from it serves TLS only:
 * TLS 1.3 by default, 1.2 and 1.3 with -tls-min 1.2; with a client CA, a client
 * certificate signed by it is required (mtls).
 */
public final class ServerTls {
    public final PrivateKey key;
    public final X509Certificate[] chain;
    /** The CAs a client certificate must chain to; null: no client certificate asked. */
    public final X509Certificate[] clientCas;
    /** "1.3" or "1.2". */
    public final String min;

    private ServerTls(PrivateKey key, X509Certificate[] chain, X509Certificate[] clientCas, String min) {
        this.key = key;
        this.chain = chain;
        this.clientCas = clientCas;
        this.min = min;
    }

    /** Reads the files; an unreadable one is an IOException naming the file. */
    public static ServerTls load(String certFile, String keyFile, String clientCaFile, String min)
            throws IOException, GeneralSecurityException {
        X509Certificate[] chain = Pem.certificates(certFile);
        PrivateKey key = Pem.privateKey(keyFile);
        X509Certificate[] cas = clientCaFile == null || clientCaFile.isEmpty() ? null : Pem.certificates(clientCaFile);
        return new ServerTls(key, chain, cas, min);
    }

    public boolean mutual() {
        return clientCas != null;
    }

    /** The protocol versions enabled: TLSv1.3 alone, or with TLSv1.2 under -tls-min 1.2. */
    public String[] protocols() {
        return protocols(min);
    }

    public static String[] protocols(String min) {
        return min.equals("1.2") ? new String[] {"TLSv1.3", "TLSv1.2"} : new String[] {"TLSv1.3"};
    }

    /** The JDK's own TLS (SunJSSE) with this key and, for mtls, this trust. */
    public SSLContext jdkContext() throws GeneralSecurityException {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(keyManagers(key, chain), mutual() ? trustManagers(clientCas) : null, new SecureRandom());
        return ctx;
    }

    /** SSLParameters for a JDK listener: protocols, client authentication. */
    public SSLParameters parameters(SSLContext ctx) {
        SSLParameters p = ctx.getDefaultSSLParameters();
        p.setProtocols(protocols());
        p.setNeedClientAuth(mutual());
        return p;
    }

    static javax.net.ssl.KeyManager[] keyManagers(PrivateKey key, X509Certificate[] chain) throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try {
            ks.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        char[] pw = new char[0];
        ks.setKeyEntry("key", key, pw, chain);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, pw);
        return kmf.getKeyManagers();
    }

    static javax.net.ssl.TrustManager[] trustManagers(X509Certificate[] cas) throws GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try {
            ks.load(null, null);
        } catch (IOException e) {
            throw new GeneralSecurityException(e);
        }
        for (int i = 0; i < cas.length; i++) {
            ks.setCertificateEntry("ca" + i, cas[i]);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        return tmf.getTrustManagers();
    }
}
