package rpcbed.tls;

import java.security.GeneralSecurityException;
import java.security.Provider;
import java.security.Security;
import javax.net.ssl.SSLContext;

/**
 * A security provider whose "SSLContext.TLS" is the JDK's own with ClientEngines' client
 * engines, for a library that builds its SSLContext itself from the default provider
 * and offers no hook to hand it one: Dubbo's netty4 transport (Netty's JDK SslContext
 * calls SSLContext.getInstance("TLS")). Installed first in the list for one run and
 * removed after it, so the other transports' contexts stay the JDK's.
 */
public final class EngineProvider extends Provider {
    public static final String NAME = "rpcbed-client-engines";
    private static final long serialVersionUID = 1L;

    private final transient ClientTls tls;
    private final int port;

    private EngineProvider(ClientTls tls, int port) {
        super(NAME, "1.0", "the JDK's TLS with rpcbed's client engines (checked name, counted handshakes)");
        this.tls = tls;
        this.port = port;
        putService(new Service(this, "SSLContext", "TLS", ClientEngines.Spi.class.getName(), null, null) {
            @Override
            public Object newInstance(Object param) throws java.security.NoSuchAlgorithmException {
                try {
                    return ClientEngines.spi(EngineProvider.this.tls, EngineProvider.this.port,
                        SSLContext.getInstance("TLS", "SunJSSE"));
                } catch (GeneralSecurityException e) {
                    throw new java.security.NoSuchAlgorithmException("SunJSSE TLS: " + e.getMessage(), e);
                }
            }
        });
    }

    /** Makes tls's engines the default TLS of this JVM (until {@link #uninstall}). */
    public static synchronized void install(ClientTls tls, int port) {
        Security.removeProvider(NAME);
        Security.insertProviderAt(new EngineProvider(tls, port), 1);
    }

    public static synchronized void uninstall() {
        Security.removeProvider(NAME);
    }
}
