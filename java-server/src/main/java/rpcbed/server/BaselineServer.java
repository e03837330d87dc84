package rpcbed.server;

/** A running Java baseline server (java -jar java-client.jar serve). */
public interface BaselineServer extends AutoCloseable {
    /** The bound port (useful when started on port 0). */
    int port();

    /** The calls it answered (GET /stats). */
    rpcbed.stats.CallStats calls();

    /** Stops accepting, lets in-flight calls end, frees the port. */
    @Override
    void close();
}
