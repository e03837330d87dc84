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
// go-client -rate): a call's end minus the time it was due on vegeta's schedule,
// whatever delayed its sending. Latency from the send is vegeta's own figure: its
// end minus when a worker began it. Per call the first is never below the
// second (a hit is never sent before it is due), so neither is any percentile.
type Summary struct {
	Requests int64   // results read
	Failed   int64   // a non-2xx code or an error
	Seconds  float64 // from the first call's intended start to the last call's end
	Achieved float64 // Requests / Seconds

	P50Us, P99Us         int64 // from the intended start
	P50SentUs, P99SentUs int64 // from the send
}

// maxSpan bounds seq times the interval (ns), so that no hostile seq overflows.
const maxSpan = int64(1) << 62

// ReadVegetaCSV reads the results of `vegeta attack -rate R` as `vegeta encode
// -to csv` writes them: timestamp (Unix ns), code, latency (ns), bytes out, bytes
// in, error, body, attack, seq, and more columns that are not read. rate is R in
// calls per second.
//
// vegeta's schedule (its ConstantPacer, v12): hit seq is due at the attack's
// start plus (seq+1) intervals of 1e9/R ns (integer division), and a hit that is
// late is sent at once, so the later ones stay on that schedule. The results do
// not carry the attack's start, and the first hit is often sent late: Go's
// scheduler wakes a sleep of 50 us (20000/s) up to 1 ms late when the process is
// idle, and a schedule taken from the first hit's send would move every due time
// by as much (p50 read as 0 at 20000/s on a quiet machine while the p50 from the
// send was 297 us). So the start is taken from every hit: no hit leaves before it
// is due (timestamps and seq are taken together under one lock in vegeta), hence
// start <= timestamp - (seq+1)*interval for each, and the latest start that obeys
// all of them is used. It is exact when any hit left on time, and otherwise
// errs towards shorter latencies, never longer.
func ReadVegetaCSV(r io.Reader, rate float64) (Summary, error) {
	if !(rate > 0) || math.IsInf(rate, 0) || rate > 1e9 {
		return Summary{}, fmt.Errorf("rate %v: want above 0 and at most 1e9 calls/s", rate)
	}
	interval := int64(1e9 / rate) // vegeta: Per.Nanoseconds() / Freq
	type row struct {
		start, end int64 // Unix ns
		seq        int64
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var rows []row
	var s Summary
	first := int64(math.MaxInt64) // the first hit's intended start (seq 0)
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
		if lat > math.MaxInt64-ts {
			return Summary{}, fmt.Errorf("line %d: timestamp %d plus latency %d is past the year 2262", line, ts, lat)
		}
		if seq > maxSpan/interval {
			return Summary{}, fmt.Errorf("line %d: seq %d at %v calls/s is more than 146 years of calls", line, seq, rate)
		}
		s.Requests++
		if code < 200 || code > 299 || rec[5] != "" {
			s.Failed++
		}
		first = min(first, ts-seq*interval)
		rows = append(rows, row{ts, ts + lat, seq})
	}
	if s.Requests == 0 {
		return Summary{}, errors.New("no results")
	}
	co, sent := stats.NewLatency(), stats.NewLatency() // go-client's geometry
	highest := uint64(co.HighestTrackableValue())
	last := int64(math.MinInt64)
	for _, r := range rows {
		due := first + r.seq*interval // <= r.start, by the choice of first
		// end - due >= end - start >= 0, and below 2^64: exact in uint64.
		co.RecordValue(int64(min(uint64(r.end-due)/1e3, highest)))
		sent.RecordValue(int64(min(uint64(r.end-r.start)/1e3, highest)))
		last = max(last, r.end)
	}
	s.Seconds = (float64(last) - float64(first)) / 1e9
	if s.Seconds > 0 {
		s.Achieved = float64(s.Requests) / s.Seconds
	}
	s.P50Us, s.P99Us = co.ValueAtQuantile(50), co.ValueAtQuantile(99)
	s.P50SentUs, s.P99SentUs = sent.ValueAtQuantile(50), sent.ValueAtQuantile(99)
	return s, nil
}
