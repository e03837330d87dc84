package rpcbed.tls;

import java.nio.ByteBuffer;
import java.security.KeyManagementException;
import java.security.SecureRandom;
import java.util.List;
import java.util.function.BiFunction;
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
 * An SSLContext for a library that makes its own SSLEngines and sets them up itself
 * (IceSSL, Dubbo's netty4 transport). Every engine it hands out is a client engine of
 * one ClientTls: made for -servername at the server's port (so the JDK's session cache
 * can find a session to resume, and the name is checked as HTTPS clients check it),
 * offering only -tls-version, and whatever the library sets after that cannot undo
 * these. Each completed handshake is counted with what it negotiated.
 */
public final class ClientEngines {
    private ClientEngines() {}

    /**
     * An SSLContext whose engines come from tls's context (one per engine with -resume
     * off). For a library that calls init itself, use {@link #spi}.
     */
    public static SSLContext wrap(ClientTls tls, int port) throws java.security.GeneralSecurityException {
        SSLContext first = tls.context();
        return new SSLContext(new Spi(tls, port, first, true), first.getProvider(), first.getProtocol()) {};
    }

    /** The SPI of a context the library initializes with its own key and trust managers. */
    public static SSLContextSpi spi(ClientTls tls, int port, SSLContext uninitialized) {
        return new Spi(tls, port, uninitialized, false);
    }

    static final class Spi extends SSLContextSpi {
        private final ClientTls tls;
        private final int port;
        private final SSLContext inner;
        /** Whether inner is tls's own context (else the library initialized it). */
        private final boolean own;

        Spi(ClientTls tls, int port, SSLContext inner, boolean own) {
            this.tls = tls;
            this.port = port;
            this.inner = inner;
            this.own = own;
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) throws KeyManagementException {
            if (!own) {
                inner.init(km, tm, sr);
            }
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
            return engineCreateSSLEngine(null, port);
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int p) {
            SSLContext ctx = inner;
            if (own && !tls.resume) {
                try {
                    ctx = tls.newContext();
                } catch (java.security.GeneralSecurityException e) {
                    throw new IllegalStateException("TLS context: " + e.getMessage(), e);
                }
            }
            // The library's port when it gives one (Ice does), else the server's.
            return new Engine(tls, ctx, ctx.createSSLEngine(tls.serverName, p > 0 ? p : port));
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

    /** Delegates everything; keeps the version and the name check; counts the handshake. */
    static final class Engine extends SSLEngine {
        private final ClientTls tls;
        private final SSLEngine e;
        private final SSLParameters fixed;
        /** The context's default versions: what a server engine enables. */
        private final String[] defaultProtocols;
        private final long startMillis = System.currentTimeMillis();
        private boolean counted;
        /**
         * A server engine (setUseClientMode(false)) is left alone: with EngineProvider
         * installed, a server in the same JVM gets its engines from here too.
         */
        private boolean client = true;

        Engine(ClientTls tls, SSLContext ctx, SSLEngine e) {
            super(e.getPeerHost(), e.getPeerPort());
            this.tls = tls;
            this.e = e;
            e.setUseClientMode(true);
            defaultProtocols = ctx.getDefaultSSLParameters().getProtocols();
            SSLParameters p = tls.parameters(ctx);
            e.setSSLParameters(p);
            // What a library's own settings must not undo: the version, the name check, SNI.
            fixed = new SSLParameters();
            fixed.setProtocols(p.getProtocols());
            fixed.setEndpointIdentificationAlgorithm(p.getEndpointIdentificationAlgorithm());
            if (p.getServerNames() != null && !p.getServerNames().isEmpty()) {
                fixed.setServerNames(p.getServerNames());
            }
        }

        private SSLEngineResult done(SSLEngineResult r) {
            if (client && !counted && r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED) {
                counted = true;
                tls.handshake(e.getSession(), e.getApplicationProtocol(), startMillis);
            }
            return r;
        }

        @Override
        public SSLEngineResult wrap(ByteBuffer[] src, int off, int len, ByteBuffer dst) throws SSLException {
            try {
                return done(e.wrap(src, off, len, dst));
            } catch (SSLException x) {
                throw client ? tls.failed(x) : x;
            }
        }

        @Override
        public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dst, int off, int len) throws SSLException {
            try {
                return done(e.unwrap(src, dst, off, len));
            } catch (SSLException x) {
                throw client ? tls.failed(x) : x;
            }
        }

        @Override
        public void setSSLParameters(SSLParameters p) {
            e.setSSLParameters(p);
            if (client) {
                e.setSSLParameters(fixed);
            }
        }

        @Override
        public void setEnabledProtocols(String[] p) {
            // A client's version is -tls-version's (IceSSL.Protocols and the JDK defaults
            // Dubbo leaves in place would offer others).
            if (!client) {
                e.setEnabledProtocols(p);
            }
        }

        @Override
        public void setUseClientMode(boolean m) {
            e.setUseClientMode(m);
            if (client && !m) {
                // A server's engine: none of the client's settings (no name to check).
                SSLParameters p = new SSLParameters();
                p.setProtocols(defaultProtocols);
                e.setSSLParameters(p);
            }
            client = m;
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
        @Override public SSLSession getSession() { return e.getSession(); }
        @Override public SSLSession getHandshakeSession() { return e.getHandshakeSession(); }
        @Override public void beginHandshake() throws SSLException { e.beginHandshake(); }
        @Override public SSLEngineResult.HandshakeStatus getHandshakeStatus() { return e.getHandshakeStatus(); }
        @Override public boolean getUseClientMode() { return e.getUseClientMode(); }
        @Override public void setNeedClientAuth(boolean b) { e.setNeedClientAuth(b); }
        @Override public boolean getNeedClientAuth() { return e.getNeedClientAuth(); }
        @Override public void setWantClientAuth(boolean b) { e.setWantClientAuth(b); }
        @Override public boolean getWantClientAuth() { return e.getWantClientAuth(); }
        @Override public void setEnableSessionCreation(boolean b) { e.setEnableSessionCreation(b); }
        @Override public boolean getEnableSessionCreation() { return e.getEnableSessionCreation(); }
        @Override public SSLParameters getSSLParameters() { return e.getSSLParameters(); }
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
