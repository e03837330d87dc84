package rpcbed.dubbo;

import java.net.SocketAddress;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.extension.Activate;
import org.apache.dubbo.common.ssl.AuthPolicy;
import org.apache.dubbo.common.ssl.Cert;
import org.apache.dubbo.common.ssl.CertProvider;
import org.apache.dubbo.common.ssl.ProviderCert;

/**
 * Dubbo's TLS (its netty4 transport's SslServerTlsHandler and SslClientTlsHandler) takes
 * its certificates from a CertProvider. This one hands it the PEM bytes rpcbed read from
 * the -tls-* / -cacert flags, in memory (Dubbo's own SslConfig wants file paths and
 * re-reads them per connection). Set before the bootstrap starts; one process, one role.
 */
@Activate(order = -10000)
public final class TlsCerts implements CertProvider {
    private static volatile ProviderCert server;
    private static volatile Cert client;

    /** chain and key PEM; trust: client CAs PEM for mtls, else null. */
    public static void server(byte[] chain, byte[] key, byte[] clientCas) {
        server = new ProviderCert(chain, key, clientCas, clientCas == null ? AuthPolicy.SERVER_AUTH : AuthPolicy.CLIENT_AUTH);
    }

    /** chain and key: the client certificate for mtls, else null; trust: the CA PEM (null: no TLS). */
    public static void client(byte[] chain, byte[] key, byte[] trust) {
        client = trust == null ? null : new Cert(chain, key, trust);
    }

    @Override
    public boolean isSupport(URL url) {
        return server != null || client != null;
    }

    @Override
    public boolean isSupport(URL url, SocketAddress remote) {
        return isSupport(url);
    }

    @Override
    public ProviderCert getProviderConnectionConfig(URL url) {
        return server;
    }

    @Override
    public ProviderCert getProviderConnectionConfig(URL url, SocketAddress remote) {
        return server;
    }

    @Override
    public Cert getConsumerConnectionConfig(URL url) {
        return client;
    }
}
