package rpcbed.bench;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.regex.Pattern;
import rpcbed.cli.Exit;

/**
 * {@code java-client worker}: one long-lived JVM that runs many runs, handed over a pipe
 * (docs/report-format.md, "Worker mode"; gRPC's benchmark worker_service.proto is the
 * model). The JIT and loaded classes carry over between runs; connections do not.
 *
 * <p>stdout carries only the protocol: the ready line, each run's report, the done
 * lines. Anything else the JVM would print on stdout (a library's stray println) goes
 * to stderr instead, so it cannot be read as part of a report.
 */
public final class Worker {
    static final Pattern ID = Pattern.compile("[A-Za-z0-9._-]+");

    private Worker() {}

    public static int main(String[] args) {
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length > 0) {
            boolean help = args[0].equals("-h") || args[0].equals("-help") || args[0].equals("--help");
            (help ? protocol : System.err).println("usage: java -jar java-client.jar worker"
                + "   (commands on stdin: run<TAB>ID<TAB>ARGS..., quit)");
            protocol.flush();
            return help ? Exit.OK : Exit.USAGE;
        }
        return serve(System.in, protocol, System.err);
    }

    /** Reads commands until quit or EOF; returns the worker's exit code. */
    static int serve(InputStream in, PrintStream out, PrintStream err) {
        out.println("#rpcbed-worker ready java " + ProcessHandle.current().pid());
        out.flush();
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        while (true) {
            String line;
            try {
                line = r.readLine();
            } catch (IOException e) {
                err.println("java-client worker: reading stdin: " + e);
                return Exit.INTERNAL;
            }
            if (line == null) {
                return Exit.OK; // EOF is quit
            }
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            String[] f = line.split("\t", -1);
            if (f.length == 1 && f[0].equals("quit")) {
                return Exit.OK;
            }
            String id = f.length > 1 && ID.matcher(f[1]).matches() ? f[1] : null;
            if (!f[0].equals("run") || id == null) {
                err.println("java-client worker: bad command " + quote(line)
                    + ": want run<TAB>ID<TAB>ARGS... or quit (ID [A-Za-z0-9._-]+)");
                done(out, id == null ? "-" : id, Exit.USAGE);
                continue;
            }
            String[] runArgs = Arrays.copyOfRange(f, 2, f.length);
            err.println("#rpcbed-worker begin " + id);
            err.flush();
            ByteArrayOutputStream report = new ByteArrayOutputStream(4096);
            int code;
            try (PrintStream rep = new PrintStream(report, false, StandardCharsets.UTF_8)) {
                code = Bench.main(runArgs, rep, err);
            } catch (Throwable t) { // an Error in one run (out of memory) must not end the worker silently
                err.println("java-client: " + t);
                t.printStackTrace(err);
                code = Exit.INTERNAL;
            }
            err.println("#rpcbed-worker end " + id);
            err.flush();
            out.write(report.toByteArray(), 0, report.size());
            done(out, id, code);
        }
    }

    private static void done(PrintStream out, String id, int code) {
        out.println("#rpcbed-worker done " + id + " exit=" + code);
        out.flush();
    }

    private static String quote(String s) {
        String t = s.length() > 200 ? s.substring(0, 200) + "..." : s;
        return "\"" + t.replace("\t", "\\t") + "\"";
    }
}
