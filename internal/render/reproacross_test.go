package render

import (
	"bytes"
	"testing"

	"github.com/rpcbed/rpcbed/internal/results"
)

// README's reproduction-across block: one experiment on one host and across a
// link (one run drifted, one claim missing from it, an experiment only one run
// has left out): a golden.
func TestReproductionAcrossGolden(t *testing.T) {
	find := func(rule, claim, measured, holds string) results.Finding {
		return results.Finding{Rule: rule, Claim: claim, Measured: measured, Holds: holds}
	}
	loop := ReproductionRun{Dir: "results/reproduce-loopback", Sections: []results.Section{
		{Name: "go-grpc-thrift-aerospike", Findings: []results.Finding{
			find("grpc-thrift-throughput-c50", "gRPC throughput beats Thrift by 3-17 % (at c=50)", "-28.4% [-65.2..47.3]", results.NotDistinguished),
			find("grpc-thrift-throughput-c800", "gRPC throughput beats Thrift by 3-17 % (at c=800)", "-40.1% [-64.0..-0.4]", results.No),
		}},
		{Name: "php-go-growth", Findings: []results.Finding{find("growth-order", "PHP | slowest", "5 of 5", results.Yes)}},
	}}
	lan := ReproductionRun{Dir: "results/reproduce-lan", Sections: []results.Section{
		{Name: "go-grpc-thrift-aerospike", Findings: []results.Finding{
			find("grpc-thrift-throughput-c50", "gRPC throughput beats Thrift by 3-17 % (at c=50)", "-37.1% [-56.7..-8.4]", results.No),
		}, Links: []results.LinkCheck{{Link: "lan", AskedRTTUs: 200, AddedRTTUs: 260, AfterRTTUs: 450, AfterAddedRTTUs: 327,
			Drift:   "after the cells the link added 327 µs against 200 asked",
			Delayer: &results.LinkDelayer{Packets: 90000, LateP50Us: 98, LateP99Us: 13407, CPUSeconds: 118.6}}}},
	}}
	var b bytes.Buffer
	if err := ReproductionAcross(&b, []ReproductionRun{loop, lan}); err != nil {
		t.Fatal(err)
	}
	golden(t, "reproduction-across.md", b.Bytes())
	if err := ReproductionAcross(&b, []ReproductionRun{loop}); err == nil {
		t.Error("one reproduction: got nil; want an error")
	}
	if err := ReproductionAcross(&b, []ReproductionRun{loop, {Dir: "x"}}); err == nil {
		t.Error("no shared experiment: got nil; want an error")
	}
}
