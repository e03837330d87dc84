package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
)

// Marker is the line that opens the rpcbed block.
const Marker = "rpcbed report v1"

const banner = "This is ApacheBench, Version 2.3 <$Revision: 1903618 $>\n" +
	"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
	"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n"

// Write prints r in ab 2.3's layout (docs/report-format.md), then the rpcbed block
// when r.Rpcbed is set. The whole report goes out in one w.Write.
func Write(w io.Writer, r Report) error {
	_, err := w.Write(Append(make([]byte, 0, 2048), r))
	return err
}

// Append is Write into a byte slice.
func Append(b []byte, r Report) []byte {
	b = append(b, banner...)
	b = fmt.Appendf(b, "Benchmarking %s (be patient).....done\n\n\n", r.ServerHostname)

	b = label(b, "Server Software:", r.ServerSoftware)
	b = label(b, "Server Hostname:", r.ServerHostname)
	b = labelInt(b, "Server Port:", int64(r.ServerPort), "")
	b = append(b, '\n')
	b = label(b, "Document Path:", r.DocumentPath)
	if r.VariableLength {
		b = label(b, "Document Length:", "Variable")
	} else {
		b = labelInt(b, "Document Length:", r.DocumentLength, " bytes")
	}
	b = append(b, '\n')

	b = labelInt(b, "Concurrency Level:", int64(r.Concurrency), "")
	b = labelFloat(b, "Time taken for tests:", r.TimeTakenSeconds, 3, " seconds")
	b = labelInt(b, "Complete requests:", r.Complete, "")
	b = labelInt(b, "Failed requests:", r.Failed, "")
	if r.Failed > 0 {
		f := r.FailedBy
		b = fmt.Appendf(b, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			f.Connect, f.Receive, f.Length, f.Exceptions)
	}
	if r.WriteErrors > 0 {
		b = labelInt(b, "Write errors:", r.WriteErrors, "")
	}
	// ab prints Non-2xx before Keep-Alive.
	if r.Non2xx > 0 {
		b = labelInt(b, "Non-2xx responses:", r.Non2xx, "")
	}
	if r.KeepAlive > 0 {
		b = labelInt(b, "Keep-Alive requests:", r.KeepAlive, "")
	}
	b = labelInt(b, "Total transferred:", r.TotalTransferred, " bytes")
	b = labelInt(b, "HTML transferred:", r.HTMLTransferred, " bytes")
	b = labelFloat(b, "Requests per second:", r.RequestsPerSecond, 2, " [#/sec] (mean)")
	b = labelFloat(b, "Time per request:", r.TimePerRequestMs, 3, " [ms] (mean)")
	b = labelFloat(b, "Time per request:", r.TimePerRequestAllMs, 3, " [ms] (mean, across all concurrent requests)")
	b = labelFloat(b, "Transfer rate:", r.TransferRateKBps, 2, " [Kbytes/sec] received")

	b = append(b, "\nConnection Times (ms)\n              min  mean[+/-sd] median   max\n"...)
	b = connRow(b, "Connect:", r.Connect)
	b = connRow(b, "Processing:", r.Processing)
	b = connRow(b, "Waiting:", r.Waiting)
	b = connRow(b, "Total:", r.Total)

	pcts := r.Percentiles
	if len(pcts) == 0 && r.Rpcbed != nil {
		// An rpcbed client prints every line, zeros included: one shape.
		pcts = zeroPercentiles()
	}
	if len(pcts) > 0 {
		b = append(b, "\nPercentage of the requests served within a certain time (ms)\n"...)
		for _, p := range pcts {
			b = fmt.Appendf(b, " %3d%%  %5d", p.Percent, p.Ms)
			if p.Percent == 100 {
				b = append(b, " (longest request)"...)
			}
			b = append(b, '\n')
		}
	}

	if r.Rpcbed != nil {
		b = appendExtra(b, r.Rpcbed)
	}
	return b
}

func appendExtra(b []byte, x *Extra) []byte {
	b = append(b, "\n"+Marker+"\n"...)
	b = label(b, "Client:", x.Client)
	b = label(b, "Protocol:", x.Protocol)
	b = label(b, "Call:", x.Call)
	b = labelInt(b, "Items:", int64(x.Items), "")
	if x.SharedConnections {
		b = labelInt(b, "Connections:", int64(x.Connections), " (shared)")
	} else {
		b = labelInt(b, "Connections:", int64(x.Connections), " (per worker)")
	}
	b = label(b, "Loop:", x.Loop)
	b = labelInt(b, "Target rate:", int64(x.TargetRate), " [#/sec]")
	b = strconv.AppendFloat(pad(b, "Warm-up:"), x.WarmupSeconds, 'f', 3, 64)
	b = append(b, " seconds, "...)
	b = strconv.AppendInt(b, x.WarmupCalls, 10)
	b = append(b, " calls excluded\n"...)
	b = labelInt(b, "Latency p50:", x.P50Us, " [us]")
	b = labelInt(b, "Latency p90:", x.P90Us, " [us]")
	b = labelInt(b, "Latency p99:", x.P99Us, " [us]")
	b = labelInt(b, "Latency p99.9:", x.P999Us, " [us]")
	b = labelFloat(b, "Latency mean:", x.MeanUs, 1, " [us]")
	b = labelInt(b, "Latency max:", x.MaxUs, " [us]")
	b = labelFloat(b, "Client CPU user:", x.CPUUserSeconds, 3, " [s]")
	b = labelFloat(b, "Client CPU system:", x.CPUSystemSeconds, 3, " [s]")

	b = pad(b, "Errors:")
	if len(x.Errors) == 0 {
		b = append(b, "none"...)
	}
	for i, k := range sortedKeys(x.Errors) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, x.Errors[k], 10)
	}
	b = append(b, '\n')

	b = pad(b, "Versions:")
	if len(x.Versions) == 0 {
		b = append(b, "none"...)
	}
	for i, k := range sortedKeys(x.Versions) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, x.Versions[k]...)
	}
	b = append(b, '\n')

	if x.V11() {
		b = label(b, "Check:", x.Check)
		b = label(b, "Runtime:", x.Runtime)
		b = label(b, "CPU scope:", x.CPUScope)
		b = labelFloat(b, "Window start:", x.WindowStart, 6, " [s]")
		b = labelFloat(b, "Window end:", x.WindowEnd, 6, " [s]")
		b = label(b, "Warm-up settled:", x.WarmupSettled)
	}
	if x.JITCompileMs != nil {
		b = label(b, "JIT compile:", strconv.FormatInt(*x.JITCompileMs, 10)+" [ms]")
	}
	if x.LatencyHistogram != "" {
		b = label(b, "Latency histogram:", x.LatencyHistogram+" [us]")
	}
	if t := x.TLS; t != nil {
		b = label(b, "TLS:", t.Version+" "+t.CipherSuite+" "+t.Group+" ALPN="+t.ALPN)
		b = label(b, "TLS handshakes:", strconv.FormatInt(t.Handshakes, 10)+" (resumed "+strconv.FormatInt(t.Resumed, 10)+")")
	}
	if x.ConnectionsOpened != nil {
		b = labelInt(b, "Connections opened:", *x.ConnectionsOpened, "")
	}
	return b
}

func zeroPercentiles() []Percentile {
	p := make([]Percentile, len(abPercents))
	for i, pc := range abPercents {
		p[i].Percent = pc
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// pad appends l padded with spaces to ab's value column (column 25).
func pad(b []byte, l string) []byte {
	b = append(b, l...)
	for n := len(l); n < 24; n++ {
		b = append(b, ' ')
	}
	return b
}

func label(b []byte, l, v string) []byte {
	return append(append(pad(b, l), v...), '\n')
}

func labelInt(b []byte, l string, v int64, unit string) []byte {
	b = strconv.AppendInt(pad(b, l), v, 10)
	return append(append(b, unit...), '\n')
}

func labelFloat(b []byte, l string, v float64, prec int, unit string) []byte {
	b = strconv.AppendFloat(pad(b, l), v, 'f', prec, 64)
	return append(append(b, unit...), '\n')
}

// connRow is ab's "%-12s%5d %4d %5.1f %6d %7d" row (docs/report-format.md's example).
func connRow(b []byte, l string, c ConnRow) []byte {
	return fmt.Appendf(b, "%-12s%5d %4d %5.1f %6d %7d\n", l, c.Min, c.Mean, c.SD, c.Median, c.Max)
}
