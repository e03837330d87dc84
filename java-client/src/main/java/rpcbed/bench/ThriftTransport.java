package rpcbed.bench;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.Map;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TConfiguration;
import org.apache.thrift.TException;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocolException;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.layered.TFramedTransport;
import rpcbed.gen.thrift.Auth;
import rpcbed.gen.thrift.Data;
import rpcbed.gen.thrift.DataError;
import rpcbed.gen.thrift.DataListRequest;
import rpcbed.gen.thrift.DataListResponse;
import rpcbed.gen.thrift.DataTypeRequest;
import rpcbed.gen.thrift.DataTypeResponse;
import rpcbed.server.ThriftServer;

/** Apache Thrift, framed transport + binary protocol (as go-server); one socket per Conn. */
final class ThriftTransport implements Transport {
    private final Config cfg;

    ThriftTransport(Config cfg) {
        this.cfg = cfg;
    }

    @Override
    public Conn open(int index) throws CallError {
        ThriftConn c = new ThriftConn();
        c.connect();
        return c;
    }

    @Override
    public boolean sharedConnSafe() {
        return false;
    }

    @Override
    public String serverSoftware() {
        return ""; // Thrift says nothing about the server
    }

    @Override
    public Map<String, String> versions() {
        return Map.of("thrift", Transports.version("thrift"));
    }

    @Override
    public void close() {}

    /** A socket that counts what it reads: the response bodies, as ab counts them. */
    static final class CountingSocket extends TSocket {
        long read;

        CountingSocket(TConfiguration conf, String host, int port, int timeout) throws TTransportException {
            super(conf, host, port, timeout);
        }

        /** Over a connected socket (a TLS one, handshake done). */
        CountingSocket(java.net.Socket connected) throws TTransportException {
            super(connected);
        }

        @Override
        public int read(byte[] buf, int off, int len) throws TTransportException {
            int n = super.read(buf, off, len);
            if (n > 0) {
                read += n;
            }
            return n;
        }
    }

    private final class ThriftConn implements Conn {
        private CountingSocket socket;
        private TFramedTransport framed;
        private Data.Client client;

        void connect() throws CallError {
            try {
                TConfiguration conf = TConfiguration.custom()
                    .setMaxFrameSize(ThriftServer.MAX_FRAME)
                    .setMaxMessageSize(ThriftServer.MAX_FRAME)
                    .build();
                if (cfg.tls == null) {
                    socket = new CountingSocket(conf, cfg.host, cfg.port, cfg.timeoutMillis());
                    socket.open();
                } else {
                    // What libthrift's TSSLTransportFactory.getClientSocket does (an
                    // SSLSocket from an SSLContext, wrapped in a TSocket), with the context
                    // built from the PEM flags in memory instead of keystore files, and the
                    // server's name checked (TSSLTransportFactory checks none).
                    try {
                        socket = new CountingSocket(cfg.tls.connect(cfg.host, cfg.port, cfg.timeoutMillis()));
                    } catch (java.io.IOException e) {
                        throw new TTransportException(TTransportException.NOT_OPEN, e.toString(), e);
                    }
                }
                framed = new TFramedTransport(socket, ThriftServer.MAX_FRAME);
                client = new Data.Client(new TBinaryProtocol(framed));
            } catch (TTransportException e) {
                close();
                throw new CallError(Kind.CONNECT, "cannot connect to " + cfg.addr + ": " + e.getMessage(), e);
            }
        }

        @Override
        public long call(Session s) throws CallError {
            if (client == null) {
                connect(); // the previous call broke the connection
            }
            Auth auth = new Auth(s.clientId, s.token);
            long before = socket.read;
            try {
                if (cfg.dataList()) {
                    DataListResponse r = client.DataList(new DataListRequest(auth, cfg.items));
                    s.token = r.getAuth().getToken();
                    if (r.getItemsSize() != cfg.items) {
                        throw Transports.wrongItems(r.getItemsSize(), cfg.items);
                    }
                } else {
                    DataTypeResponse r = client.DataType(new DataTypeRequest(auth, Config.GROUP_NAME, Config.EN_NAME));
                    s.token = r.getAuth().getToken();
                    if (r.getCodeId() != 101) {
                        throw Transports.wrongCode(r.getCodeId());
                    }
                }
                // The frame's 4-byte length prefix is framing, not body.
                return socket.read - before - 4;
            } catch (DataError e) {
                Kind k = Transports.dataErrorKind(e.getCode());
                if (k == Kind.UNAUTHENTICATED) {
                    s.token = "";
                }
                throw new CallError(k, "DataError " + e.getCode() + ": " + e.getMessage(), e);
            } catch (TApplicationException e) {
                throw new CallError(Kind.EXCEPTIONS, "TApplicationException: " + e.getMessage(), e);
            } catch (TProtocolException e) {
                close();
                throw new CallError(Kind.RECEIVE, "protocol: " + e.getMessage(), e);
            } catch (TException e) {
                close();
                Throwable cause = e.getCause();
                if (cause instanceof SocketTimeoutException) {
                    throw new CallError(Kind.TIMEOUT, e.getMessage(), e);
                }
                if (cause instanceof ConnectException) {
                    throw new CallError(Kind.CONNECT, e.getMessage(), e);
                }
                throw new CallError(Kind.RECEIVE, String.valueOf(e.getMessage()), e);
            }
        }

        @Override
        public void close() {
            if (framed != null) {
                framed.close();
            } else if (socket != null) {
                socket.close();
            }
            client = null;
            framed = null;
        }
    }
}
