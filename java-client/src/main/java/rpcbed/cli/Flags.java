package rpcbed.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Go-style flags as go-client takes them: {@code -name value}, {@code -name=value},
 * {@code --name}; boolean flags need no value. Every flag is read once; {@link #done}
 * refuses any flag nobody asked for.
 */
public final class Flags {
    private final Map<String, String> values = new LinkedHashMap<>();
    private final List<String> seen = new ArrayList<>();

    public Flags(String[] args) throws UsageError {
        this(args, Set.of("k", "per-client", "auth", "h", "help"));
    }

    public Flags(String[] args, Set<String> booleans) throws UsageError {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-") || a.equals("-") || a.equals("--")) {
                throw new UsageError("unexpected argument \"" + a + "\"");
            }
            String name = a.replaceFirst("^--?", "");
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (booleans.contains(name)) {
                value = "true";
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new UsageError("flag needs an argument: -" + name);
            }
            if (values.put(name, value) != null) {
                throw new UsageError("flag given twice: -" + name);
            }
        }
    }

    public boolean has(String name) {
        return values.containsKey(name);
    }

    public String string(String name, String def) {
        seen.add(name);
        return values.getOrDefault(name, def);
    }

    public int integer(String name, int def) throws UsageError {
        long v = longValue(name, def);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new UsageError("-" + name + " " + v + ": out of range");
        }
        return (int) v;
    }

    public long longValue(String name, long def) throws UsageError {
        String v = string(name, null);
        if (v == null) {
            return def;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageError("-" + name + " \"" + v + "\": not an integer");
        }
    }

    public boolean bool(String name, boolean def) throws UsageError {
        String v = string(name, null);
        if (v == null) {
            return def;
        }
        return switch (v) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw new UsageError("-" + name + " \"" + v + "\": want true or false");
        };
    }

    /** Seconds as go-client takes them: Go durations (30s, 1m30s, 500ms) or plain seconds (30, 1.5). */
    public long nanos(String name, long def) throws UsageError {
        String v = string(name, null);
        if (v == null) {
            return def;
        }
        return durationValue(name, v);
    }

    /** The value v of flag -name as a duration in nanoseconds (0 to a day). */
    public static long durationValue(String name, String v) throws UsageError {
        long ns;
        try {
            ns = parseDuration(v.trim());
        } catch (UsageError e) {
            throw new UsageError("-" + name + " " + e.getMessage());
        }
        if (ns < 0 || ns > 86_400_000_000_000L) {
            throw new UsageError("-" + name + " \"" + v + "\": want 0 to 86400 seconds");
        }
        return ns;
    }

    static long parseDuration(String v) throws UsageError {
        try {
            double s = Double.parseDouble(v);
            if (Double.isNaN(s)) {
                throw new NumberFormatException();
            }
            return (long) (s * 1e9);
        } catch (NumberFormatException e) {
            // fall through to Go syntax
        }
        java.util.regex.Matcher m = java.util.regex.Pattern
            .compile("(\\d+(?:\\.\\d*)?)(h|ms|us|µs|ns|m|s)").matcher(v);
        long total = 0;
        int end = 0;
        while (m.find() && m.start() == end) {
            double x = Double.parseDouble(m.group(1));
            double unit = switch (m.group(2)) {
                case "h" -> 3600e9;
                case "m" -> 60e9;
                case "s" -> 1e9;
                case "ms" -> 1e6;
                case "us", "µs" -> 1e3;
                default -> 1;
            };
            total += (long) (x * unit);
            end = m.end();
        }
        if (end == 0 || end != v.length()) {
            throw new UsageError("\"" + v + "\": want a duration like 30s or whole seconds");
        }
        return total;
    }

    public void done() throws UsageError {
        for (String name : values.keySet()) {
            if (!seen.contains(name)) {
                throw new UsageError("flag provided but not defined: -" + name);
            }
        }
    }
}
