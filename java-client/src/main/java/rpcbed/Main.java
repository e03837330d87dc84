package rpcbed;

import rpcbed.bench.Bench;
import rpcbed.bench.Worker;

/**
 * java-client: the rpcbed Java load client ({@code java -jar java-client.jar -proto ...}),
 * its long-lived worker ({@code java-client.jar worker}) and the Java baseline servers
 * ({@code java -jar java-client.jar serve -proto ...}).
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        int code;
        if (args.length > 0 && args[0].equals("serve")) {
            code = Serve.main(java.util.Arrays.copyOfRange(args, 1, args.length));
        } else if (args.length > 0 && args[0].equals("worker")) {
            code = Worker.main(java.util.Arrays.copyOfRange(args, 1, args.length));
        } else {
            code = Bench.main(args, System.out, System.err);
        }
        System.out.flush();
        // Dubbo, Ice and gRPC leave non-daemon threads behind: exit explicitly.
        System.exit(code);
    }
}
