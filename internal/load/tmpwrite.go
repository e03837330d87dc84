package load

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rpcbed/rpcbed/internal/report"
)

// writeReport prints rep in docs/report-format.md's layout.
// TEMPORARY: replaced by report.Write once internal/report has it.
func writeReport(w io.Writer, r report.Report) error {
	var b strings.Builder
	kv := func(k, format string, a ...any) {
		fmt.Fprintf(&b, "%-24s"+format+"\n", append([]any{k + ":"}, a...)...)
	}
	b.WriteString("This is ApacheBench, Version 2.3 <$Revision: 1903618 $>\n" +
		"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
		"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n")
	fmt.Fprintf(&b, "Benchmarking %s (be patient).....done\n\n\n", r.ServerHostname)
	kv("Server Software", "%s", r.ServerSoftware)
	kv("Server Hostname", "%s", r.ServerHostname)
	kv("Server Port", "%d", r.ServerPort)
	b.WriteString("\n")
	kv("Document Path", "%s", r.DocumentPath)
	kv("Document Length", "%d bytes", r.DocumentLength)
	b.WriteString("\n")
	kv("Concurrency Level", "%d", r.Concurrency)
	kv("Time taken for tests", "%.3f seconds", r.TimeTakenSeconds)
	kv("Complete requests", "%d", r.Complete)
	kv("Failed requests", "%d", r.Failed)
	if r.Failed > 0 {
		fmt.Fprintf(&b, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			r.FailedBy.Connect, r.FailedBy.Receive, r.FailedBy.Length, r.FailedBy.Exceptions)
	}
	if r.KeepAlive > 0 {
		kv("Keep-Alive requests", "%d", r.KeepAlive)
	}
	if r.Non2xx > 0 {
		kv("Non-2xx responses", "%d", r.Non2xx)
	}
	kv("Total transferred", "%d bytes", r.TotalTransferred)
	kv("HTML transferred", "%d bytes", r.HTMLTransferred)
	kv("Requests per second", "%.2f [#/sec] (mean)", r.RequestsPerSecond)
	kv("Time per request", "%.3f [ms] (mean)", r.TimePerRequestMs)
	kv("Time per request", "%.3f [ms] (mean, across all concurrent requests)", r.TimePerRequestAllMs)
	kv("Transfer rate", "%.2f [Kbytes/sec] received", r.TransferRateKBps)
	b.WriteString("\nConnection Times (ms)\n              min  mean[+/-sd] median   max\n")
	for _, row := range []struct {
		l string
		r report.ConnRow
	}{{"Connect:", r.Connect}, {"Processing:", r.Processing}, {"Waiting:", r.Waiting}, {"Total:", r.Total}} {
		fmt.Fprintf(&b, "%-12s %4d %5d %5.1f %6d %7d\n", row.l, row.r.Min, row.r.Mean, row.r.SD, row.r.Median, row.r.Max)
	}
	b.WriteString("\nPercentage of the requests served within a certain time (ms)\n")
	for _, p := range r.Percentiles {
		if p.Percent == 100 {
			fmt.Fprintf(&b, " 100%%  %5d (longest request)\n", p.Ms)
		} else {
			fmt.Fprintf(&b, " %3d%%  %5d\n", p.Percent, p.Ms)
		}
	}
	if x := r.Rpcbed; x != nil {
		b.WriteString("\nrpcbed report v1\n")
		kv("Client", "%s", x.Client)
		kv("Protocol", "%s", x.Protocol)
		kv("Call", "%s", x.Call)
		kv("Items", "%d", x.Items)
		share := "per worker"
		if x.SharedConnections {
			share = "shared"
		}
		kv("Connections", "%d (%s)", x.Connections, share)
		kv("Loop", "%s", x.Loop)
		kv("Target rate", "%d [#/sec]", x.TargetRate)
		kv("Warm-up", "%.3f seconds, %d calls excluded", x.WarmupSeconds, x.WarmupCalls)
		kv("Latency p50", "%d [us]", x.P50Us)
		kv("Latency p90", "%d [us]", x.P90Us)
		kv("Latency p99", "%d [us]", x.P99Us)
		kv("Latency p99.9", "%d [us]", x.P999Us)
		kv("Latency mean", "%.1f [us]", x.MeanUs)
		kv("Latency max", "%d [us]", x.MaxUs)
		kv("Client CPU user", "%.3f [s]", x.CPUUserSeconds)
		kv("Client CPU system", "%.3f [s]", x.CPUSystemSeconds)
		kv("Errors", "%s", pairs(x.Errors, func(v int64) string { return fmt.Sprint(v) }, "none"))
		kv("Versions", "%s", pairs(x.Versions, func(v string) string { return v }, ""))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pairs[V any](m map[string]V, f func(V) string, empty string) string {
	if len(m) == 0 {
		return empty
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var s []string
	for _, k := range keys {
		s = append(s, k+"="+f(m[k]))
	}
	return strings.Join(s, " ")
}
