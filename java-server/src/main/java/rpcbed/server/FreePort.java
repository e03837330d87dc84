package rpcbed.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** For a framework that cannot report the port it bound on "port 0" (Dubbo). */
final class FreePort {
    private FreePort() {}

    static int pick(String host) {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(host))) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
