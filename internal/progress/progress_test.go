package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// The ETA comes from measured wall times per client: a client whose runs took
// twice their plan is expected to keep doing so; a client not measured yet takes
// the ratio of those measured.
func TestProgressETA(t *testing.T) {
	l := plan.Load{Duration: plan.Duration(time.Second)} // planned 2 s a run
	goCell := plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 2, Concurrency: 1, Load: l}
	javaCell := plan.Cell{Client: "java", Protocol: "grpc", Call: "datalist", Items: 2, Concurrency: 1, Load: l}
	var out bytes.Buffer
	p := New(&out, []plan.Cell{goCell, javaCell}, func(plan.Cell) int { return 3 }, nil)
	if got, want := p.eta(), 12*time.Second; got != want {
		t.Errorf("before any run: got %v; want %v (the plan)", got, want)
	}
	p.Done(goCell, 4*time.Second) // twice its plan
	// go: 2 runs left x 2 s x 2; java, unmeasured, at go's ratio: 3 x 2 s x 2.
	if got, want := p.eta(), 20*time.Second; got != want {
		t.Errorf("after one go run: got %v; want %v", got, want)
	}
	p.Done(javaCell, time.Second) // half its plan
	if got, want := p.eta(), 8*time.Second+2*time.Second; got != want {
		t.Errorf("after one java run: got %v; want %v", got, want)
	}
	p.SkipRest(javaCell, 2)
	p.Start(goCell, 2)
	if got := out.String(); !strings.Contains(got, "[  5/6] go-grpc-datalist-2-c1 r2/3") || !strings.Contains(got, "ETA 8s") {
		t.Errorf("progress line: got %q; want run 5 of 6 and ETA 8s", got)
	}
}
