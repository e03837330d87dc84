package rpcbed.tls;

import java.nio.ByteBuffer;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import java.util.function.BiFunction;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * An SSLContext whose engines refuse to go on with a handshake that has lasted longer
 * than a deadline: the next bytes after it fail the handshake. For a library whose own
 * timeouts restart on every byte received (IceSSL: the endpoint's -t bounds a read
 * without progress, so a ClientHello sent a byte a second was held for good).
 */
public final class HandshakeDeadline {
    private HandshakeDeadline() {}

    public static SSLContext wrap(SSLContext inner, long millis) {
        return new SSLContext(new Spi(inner, millis), inner.getProvider(), inner.getProtocol()) {};
    }

    static final class Spi extends SSLContextSpi {
        private final SSLContext inner;
        private final long nanos;

        Spi(SSLContext inner, long millis) {
            this.inner = inner;
            this.nanos = millis * 1_000_000L;
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) throws KeyManagementException {
            inner.init(km, tm, sr);
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            return inner.getSocketFactory();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            return inner.getServerSocketFactory();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            return new Engine(inner.createSSLEngine(), nanos);
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            return new Engine(inner.createSSLEngine(host, port), nanos);
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            return inner.getServerSessionContext();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            return inner.getClientSessionContext();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return inner.getDefaultSSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return inner.getSupportedSSLParameters();
        }
    }

    /** Delegates everything; wrap and unwrap fail once the handshake is past its deadline. */
    static final class Engine extends SSLEngine {
        private final SSLEngine e;
        private final long deadline;
        private boolean done;

        Engine(SSLEngine e, long nanos) {
            super(e.getPeerHost(), e.getPeerPort());
            this.e = e;
            this.deadline = System.nanoTime() + nanos;
        }

        private void check() throws SSLException {
            if (done) {
                return;
            }
            if (e.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING && e.getSession().isValid()
                    && !e.getSession().getCipherSuite().equals("SSL_NULL_WITH_NULL_NULL")) {
                done = true;
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new SSLException("TLS handshake not done within its deadline");
            }
        }

        @Override
        public SSLEngineResult wrap(ByteBuffer[] src, int off, int len, ByteBuffer dst) throws SSLException {
            check();
            return e.wrap(src, off, len, dst);
        }

        @Override
        public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dst, int off, int len) throws SSLException {
            check();
            return e.unwrap(src, dst, off, len);
        }

        @Override public Runnable getDelegatedTask() { return e.getDelegatedTask(); }
        @Override public void closeInbound() throws SSLException { e.closeInbound(); }
        @Override public boolean isInboundDone() { return e.isInboundDone(); }
        @Override public void closeOutbound() { e.closeOutbound(); }
        @Override public boolean isOutboundDone() { return e.isOutboundDone(); }
        @Override public String[] getSupportedCipherSuites() { return e.getSupportedCipherSuites(); }
        @Override public String[] getEnabledCipherSuites() { return e.getEnabledCipherSuites(); }
        @Override public void setEnabledCipherSuites(String[] s) { e.setEnabledCipherSuites(s); }
        @Override public String[] getSupportedProtocols() { return e.getSupportedProtocols(); }
        @Override public String[] getEnabledProtocols() { return e.getEnabledProtocols(); }
        @Override public void setEnabledProtocols(String[] p) { e.setEnabledProtocols(p); }
        @Override public SSLSession getSession() { return e.getSession(); }
        @Override public SSLSession getHandshakeSession() { return e.getHandshakeSession(); }
        @Override public void beginHandshake() throws SSLException { e.beginHandshake(); }
        @Override public SSLEngineResult.HandshakeStatus getHandshakeStatus() { return e.getHandshakeStatus(); }
        @Override public void setUseClientMode(boolean m) { e.setUseClientMode(m); }
        @Override public boolean getUseClientMode() { return e.getUseClientMode(); }
        @Override public void setNeedClientAuth(boolean b) { e.setNeedClientAuth(b); }
        @Override public boolean getNeedClientAuth() { return e.getNeedClientAuth(); }
        @Override public void setWantClientAuth(boolean b) { e.setWantClientAuth(b); }
        @Override public boolean getWantClientAuth() { return e.getWantClientAuth(); }
        @Override public void setEnableSessionCreation(boolean b) { e.setEnableSessionCreation(b); }
        @Override public boolean getEnableSessionCreation() { return e.getEnableSessionCreation(); }
        @Override public SSLParameters getSSLParameters() { return e.getSSLParameters(); }
        @Override public void setSSLParameters(SSLParameters p) { e.setSSLParameters(p); }
        @Override public String getApplicationProtocol() { return e.getApplicationProtocol(); }
        @Override public String getHandshakeApplicationProtocol() { return e.getHandshakeApplicationProtocol(); }
        @Override public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> s) {
            e.setHandshakeApplicationProtocolSelector(s);
        }
        @Override public BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
            return e.getHandshakeApplicationProtocolSelector();
        }
    }
}
