package report

import (
	"math"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Samples is what a load client measured over the timed part of a run.
// FromSamples derives every figure of the report from it.
type Samples struct {
	ServerSoftware string
	ServerHostname string
	ServerPort     int
	DocumentPath   string
	DocumentLength int64

	Concurrency int
	Elapsed     time.Duration // measured part only, warm-up excluded
	Complete    int64         // calls that finished, failed ones included (as ab counts)
	Failed      Failures      // failures by kind; "Failed requests" is their sum
	Non2xx      int64         // calls answered with an error status
	KeepAlive   bool          // connections were kept: "Keep-Alive requests" = Complete
	Bytes       int64         // response bytes received: both "transferred" lines

	// Latency holds one value per complete call, in microseconds.
	Latency *hdrhistogram.Histogram

	// Rpcbed, when set, is copied into the report with its latency figures
	// (P50Us..MaxUs) taken from Latency.
	Rpcbed *Extra
}

// abPercents are the rows of ab's "served within a certain time" table.
var abPercents = [...]int{50, 66, 75, 80, 90, 95, 98, 99, 100}

// FromSamples computes the report the way ab 2.3 computes it from its per-request
// table, with the histogram standing in for that table (values are exact below
// 2048 us and within the histogram's precision above). Every float is rounded to
// the digits its line prints, so Parse(Write(FromSamples(s))) == FromSamples(s).
// Connect is 0: rpcbed clients connect before timing starts.
func FromSamples(s Samples) Report {
	r := Report{
		ServerSoftware:   s.ServerSoftware,
		ServerHostname:   s.ServerHostname,
		ServerPort:       s.ServerPort,
		DocumentPath:     s.DocumentPath,
		DocumentLength:   s.DocumentLength,
		Concurrency:      s.Concurrency,
		TimeTakenSeconds: round(s.Elapsed.Seconds(), 3),
		Complete:         s.Complete,
		FailedBy:         s.Failed,
		Failed:           s.Failed.Connect + s.Failed.Receive + s.Failed.Length + s.Failed.Exceptions,
		Non2xx:           s.Non2xx,
		TotalTransferred: s.Bytes,
		HTMLTransferred:  s.Bytes,
	}
	if s.KeepAlive {
		r.KeepAlive = s.Complete
	}
	if secs := s.Elapsed.Seconds(); secs > 0 && s.Complete > 0 {
		done := float64(s.Complete)
		r.RequestsPerSecond = round(done/secs, 2)
		r.TimePerRequestMs = round(float64(s.Concurrency)*secs*1000/done, 3)
		r.TimePerRequestAllMs = round(secs*1000/done, 3)
		r.TransferRateKBps = round(float64(s.Bytes)/1024/secs, 2)
	}

	h := s.Latency
	r.Percentiles = make([]Percentile, len(abPercents))
	for i, pc := range abPercents {
		r.Percentiles[i].Percent = pc
	}
	var mean float64
	if h != nil && h.TotalCount() > 0 {
		n := h.TotalCount()
		mean = h.Mean()
		lat := ConnRow{
			Min:    roundMs(h.Min()),
			Mean:   roundMs(int64(mean)),
			SD:     round(sampleSD(h, mean)/1000, 1),
			Median: roundMs(abMedian(h)),
			Max:    roundMs(h.Max()),
		}
		r.Processing, r.Waiting, r.Total = lat, lat, lat
		for i, pc := range abPercents {
			rank := n // 100%: the longest request
			if pc < 100 {
				rank = n*int64(pc)/100 + 1 // ab: stats[done*perc/100], 0-based
			}
			r.Percentiles[i].Ms = roundMs(atRank(h, rank))
		}
	}

	if s.Rpcbed != nil {
		x := *s.Rpcbed
		x.WarmupSeconds = round(x.WarmupSeconds, 3)
		x.CPUUserSeconds = round(x.CPUUserSeconds, 3)
		x.CPUSystemSeconds = round(x.CPUSystemSeconds, 3)
		x.WindowStart, x.WindowEnd = round(x.WindowStart, 6), round(x.WindowEnd, 6)
		x.P50Us, x.P90Us, x.P99Us, x.P999Us, x.MeanUs, x.MaxUs = 0, 0, 0, 0, 0, 0
		if h != nil && h.TotalCount() > 0 {
			x.P50Us = h.ValueAtQuantile(50)
			x.P90Us = h.ValueAtQuantile(90)
			x.P99Us = h.ValueAtQuantile(99)
			x.P999Us = h.ValueAtQuantile(99.9)
			x.MeanUs = round(mean, 1)
			x.MaxUs = h.Max()
		}
		r.Rpcbed = &x
	}
	return r
}

// round rounds f to prec decimals exactly as printf("%.*f") does (ties to even on
// the binary value), so the printed and the stored value are the same number.
func round(f float64, prec int) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	var buf [64]byte
	v, err := strconv.ParseFloat(string(strconv.AppendFloat(buf[:0], f, 'f', prec, 64)), 64)
	if err != nil {
		return 0
	}
	return v
}

// roundMs is ab's ap_round_ms: microseconds to the nearest millisecond.
func roundMs(us int64) int64 { return (us + 500) / 1000 }

// atRank is the rank-th smallest value (1-based), as the histogram knows it.
func atRank(h *hdrhistogram.Histogram, rank int64) int64 {
	return h.ValueAtQuantile(float64(rank) * 100 / float64(h.TotalCount()))
}

// abMedian copies ab's median, which for an odd count averages the middle value
// and the one above it, and for an even count takes the upper middle value.
func abMedian(h *hdrhistogram.Histogram) int64 {
	n := h.TotalCount()
	if n > 1 && n%2 == 1 {
		return (atRank(h, n/2+1) + atRank(h, n/2+2)) / 2
	}
	return atRank(h, n/2+1)
}

// sampleSD is ab's standard deviation: around the truncated integer mean, divided
// by n-1. It is derived from the histogram's population deviation:
// sum((x-m)^2) = n*var + n*(mean-m)^2.
func sampleSD(h *hdrhistogram.Histogram, mean float64) float64 {
	n := float64(h.TotalCount())
	if n < 2 {
		return 0
	}
	sd := h.StdDev()
	d := mean - math.Trunc(mean)
	return math.Sqrt((n*sd*sd + n*d*d) / (n - 1))
}
