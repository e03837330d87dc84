package rpcbed.bench;

import java.io.PrintStream;

/** Placeholder until the bench lands. */
public final class Bench {
    private Bench() {}

    public static int main(String[] args, PrintStream out, PrintStream err) {
        err.println("bench: not yet");
        return 2;
    }
}
