package rpcbed.bench;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Picks the transport of -proto; library versions come from the build (pom.xml). */
public final class Transports {
    private static final Properties VERSIONS = new Properties();

    static {
        try (InputStream in = Transports.class.getResourceAsStream("/rpcbed/versions.properties")) {
            if (in != null) {
                VERSIONS.load(in);
            }
        } catch (IOException e) {
            // versions print as "unknown"
        }
    }

    private Transports() {}

    public static String version(String lib) {
        return VERSIONS.getProperty(lib, "unknown");
    }

    public static Transport create(Config cfg) {
        return switch (cfg.proto) {
            case "grpc" -> new GrpcTransport(cfg);
            case "thrift" -> new ThriftTransport(cfg);
            case "http" -> new HttpTransport(cfg);
            case "ice" -> new IceTransport(cfg);
            case "dubbo" -> new DubboTransport(cfg);
            default -> throw new IllegalArgumentException("unknown proto " + cfg.proto);
        };
    }

    static CallError wrongCode(long got) {
        return new CallError(Kind.LENGTH, "got codeId " + got + "; want 101");
    }

    static CallError wrongItems(long got, int want) {
        return new CallError(Kind.LENGTH, "got " + got + " items; want " + want);
    }

    /** Maps a DataError code (Thrift, Ice, Dubbo) to the report's kind. */
    static Kind dataErrorKind(int code) {
        return switch (code) {
            case 16 -> Kind.UNAUTHENTICATED;
            case 3 -> Kind.INVALID_ARGUMENT;
            default -> Kind.EXCEPTIONS;
        };
    }
}
