package rpcbed.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import rpcbed.Serve;
import rpcbed.server.BaselineServer;

/** The worker's pipe protocol (docs/report-format.md, "Worker mode"), in-process. */
class WorkerTest {
    private record Session(int code, String out, String err) {}

    private static Session session(String stdin) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Worker.serve(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Session(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<String> protocolLines(String out) {
        List<String> l = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (line.startsWith("#rpcbed-worker")) {
                l.add(line.replaceFirst("ready java \\d+$", "ready java PID"));
            }
        }
        return l;
    }

    @Test
    void runsAndBadCommands() throws Exception {
        try (BaselineServer s = Serve.start(Serve.parse(new String[] {"-proto", "thrift", "-port", "0"}))) {
            String addr = "127.0.0.1:" + s.port();
            String run = String.join("\t", "run", "a1", "-proto", "thrift", "-call", "datatype", "-n", "20", "-addr", addr);
            String stdin = String.join("\n",
                run,
                "hello",                                   // unknown command, no ID
                "run\tbad id!\t-n\t1",                     // bad ID
                "run\tb2\t-proto\tsoap",                   // bad arguments: exit 2, no report
                "run\tc3\t-proto\tgrpc\t-call\tdatatype\t-n\t1\t-timeout\t2s\t-addr\t127.0.0.1:1", // unreachable
                run.replace("a1", "d4"),
                "quit",
                run.replace("a1", "never")) + "\n";
            Session got = session(stdin);
            assertEquals(0, got.code, "worker exit code");
            assertEquals(List.of(
                "#rpcbed-worker ready java PID",
                "#rpcbed-worker done a1 exit=0",
                "#rpcbed-worker done - exit=2",
                "#rpcbed-worker done - exit=2",
                "#rpcbed-worker done b2 exit=2",
                "#rpcbed-worker done c3 exit=4",
                "#rpcbed-worker done d4 exit=0"), protocolLines(got.out), "protocol lines; stderr:\n" + got.err);
            // Each report comes right before its done line, and only runs that print one have one.
            String[] reports = got.out.split("#rpcbed-worker done [^\n]*\n", -1);
            assertTrue(reports[0].contains("Complete requests:      20\n") && reports[0].contains("Warm-up settled:        fixed\n")
                && reports[0].matches("(?s).*\nJIT compile: +\\d+ \\[ms\\]\nLatency histogram: +HISTF\\S+ \\[us\\]\n"),
                "a1's report before its done line:\n" + reports[0]);
            assertEquals("", reports[1] + reports[2] + reports[3] + reports[4], "no report for bad commands, -proto soap, unreachable");
            assertTrue(reports[5].contains("Complete requests:      20\n"), "d4's report:\n" + reports[5]);
            for (String id : new String[] {"a1", "b2", "c3", "d4"}) {
                int b = got.err.indexOf("#rpcbed-worker begin " + id + "\n");
                int e = got.err.indexOf("#rpcbed-worker end " + id + "\n");
                assertTrue(b >= 0 && e > b, id + ": begin before end on stderr:\n" + got.err);
            }
            assertTrue(got.err.indexOf("verify: connect: ") > got.err.indexOf("#rpcbed-worker begin c3"),
                "c3's verify line inside its markers:\n" + got.err);
        }
    }

    @Test
    void eofIsQuit() {
        Session got = session("");
        assertEquals(0, got.code, "exit code");
        assertEquals(List.of("#rpcbed-worker ready java PID"), protocolLines(got.out), "protocol lines");
    }
}
