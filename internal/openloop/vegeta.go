// Package openloop reads another open-loop load generator's results with
// go-client's definitions, so that `make bench-loadgen` compares like with like:
// vegeta's results (`vegeta encode -to csv`), summarised as go-client summarises
// its own open-loop runs.
package openloop

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/rpcbed/rpcbed/internal/stats"
)

// Summary is one open-loop run.
//
// Latency from the intended start (coordinated omission corrected, as wrk2 and
// go-client -rate): a call's end minus the time it was due, the first call's
// start plus seq/rate, whatever delayed its sending. Latency from the send is
// vegeta's own figure: its end minus when a worker began it.
type Summary struct {
	Requests int64   // results read
	Failed   int64   // a non-2xx code or an error
	Seconds  float64 // from the first call's intended start to the last call's end
	Achieved float64 // Requests / Seconds

	P50Us, P99Us         int64 // from the intended start
	P50SentUs, P99SentUs int64 // from the send
}

// ReadVegetaCSV reads the results of `vegeta attack -rate R` as `vegeta encode
// -to csv` writes them: timestamp (Unix ns), code, latency (ns), bytes out, bytes
// in, error, body, attack, seq, and more columns that are not read. rate is R in
// calls per second.
func ReadVegetaCSV(r io.Reader, rate float64) (Summary, error) {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return Summary{}, fmt.Errorf("rate %v: want above 0", rate)
	}
	type row struct {
		start, end int64 // Unix ns
		seq        int64
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var rows []row
	var s Summary
	first := int64(math.MaxInt64)
	firstSeq := int64(0)
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Summary{}, err
		}
		if len(rec) < 9 {
			return Summary{}, fmt.Errorf("line %d: %d columns; want at least 9 (vegeta encode -to csv)", line, len(rec))
		}
		ts, err1 := strconv.ParseInt(rec[0], 10, 64)
		code, err2 := strconv.Atoi(rec[1])
		lat, err3 := strconv.ParseInt(rec[2], 10, 64)
		seq, err4 := strconv.ParseInt(rec[8], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil || ts <= 0 || lat < 0 || seq < 0 {
			return Summary{}, fmt.Errorf("line %d: want timestamp, code, latency and seq as numbers (%v)", line, err)
		}
		s.Requests++
		if code < 200 || code > 299 || rec[5] != "" {
			s.Failed++
		}
		if ts < first {
			first, firstSeq = ts, seq
		}
		rows = append(rows, row{ts, ts + lat, seq})
	}
	if s.Requests == 0 {
		return Summary{}, errors.New("no results")
	}
	// Hit seq is due at the attack's start plus seq/rate (vegeta's constant
	// pacer); the earliest hit was sent no sooner than it was due.
	t0 := float64(first) - float64(firstSeq)*1e9/rate
	co, sent := stats.NewLatency(), stats.NewLatency() // go-client's geometry
	highest := co.HighestTrackableValue()
	last := int64(0)
	for _, r := range rows {
		due := t0 + float64(r.seq)*1e9/rate
		co.RecordValue(min(max(int64((float64(r.end)-due)/1e3), 0), highest))
		sent.RecordValue(min((r.end-r.start)/1e3, highest))
		last = max(last, r.end)
	}
	s.Seconds = (float64(last) - t0) / 1e9
	if s.Seconds > 0 {
		s.Achieved = float64(s.Requests) / s.Seconds
	}
	s.P50Us, s.P99Us = co.ValueAtQuantile(50), co.ValueAtQuantile(99)
	s.P50SentUs, s.P99SentUs = sent.ValueAtQuantile(50), sent.ValueAtQuantile(99)
	return s, nil
}
