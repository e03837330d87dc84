package service

import "sync/atomic"

// Proto names the transport a call came in on.
type Proto uint8

const (
	GRPC Proto = iota
	Thrift
	HTTP
	numProtos
)

var protoNames = [numProtos]string{"grpc", "thrift", "http"}

func (p Proto) String() string { return protoNames[p] }

// Call names the method.
type Call uint8

const (
	CallDataType Call = iota
	CallDataList
	numCalls
)

var callNames = [numCalls]string{"datatype", "datalist"}

func (c Call) String() string { return callNames[c] }

type counter struct {
	requests atomic.Int64
	errors   atomic.Int64
	_        [48]byte // keep hot counters on separate cache lines
}

// Stats counts requests and errors per protocol and call without locks.
type Stats struct {
	c [numProtos][numCalls]counter
}

// NewStats returns zeroed counters.
func NewStats() *Stats { return &Stats{} }

// Record counts one call; adapters use it for requests rejected before the core.
func (s *Stats) Record(p Proto, c Call, err error) {
	s.c[p][c].requests.Add(1)
	if err != nil {
		s.c[p][c].errors.Add(1)
	}
}

// Count is one protocol x call's totals.
type Count struct {
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
}

// Snapshot returns counts keyed "proto" -> "call".
func (s *Stats) Snapshot() map[string]map[string]Count {
	out := make(map[string]map[string]Count, numProtos)
	for p := Proto(0); p < numProtos; p++ {
		m := make(map[string]Count, numCalls)
		for c := Call(0); c < numCalls; c++ {
			m[c.String()] = Count{s.c[p][c].requests.Load(), s.c[p][c].errors.Load()}
		}
		out[p.String()] = m
	}
	return out
}
