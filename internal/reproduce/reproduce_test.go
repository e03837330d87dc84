package reproduce

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// With nothing measured, every experiment still judges every claim, and no
// verdict is empty or "yes".
func TestJudgeWithoutMeasurements(t *testing.T) {
	for _, e := range experiments {
		t.Run(e.name, func(t *testing.T) {
			x := e.make()
			if err := x.Read("../../results/published"); err != nil {
				t.Fatal(err)
			}
			s := x.Judge(Options{}.setup())
			if len(s.Findings) == 0 {
				t.Fatal("got no findings; want one per published claim")
			}
			for _, f := range s.Findings {
				if f.Rule == "" || f.Claim == "" || f.Tolerance == "" || f.Published == "" {
					t.Errorf("finding %+v: want rule, claim, published and tolerance", f)
				}
				if f.Holds == "" || f.Holds == results.Yes || !slices.Contains(results.Verdicts, f.Holds) {
					t.Errorf("%s: got verdict %q; want one of %v, never empty or yes", f.Rule, f.Holds, results.Verdicts[1:])
				}
			}
		})
	}
}

// The published files shipped in results/published read as every experiment expects.
func TestPublishedFiles(t *testing.T) {
	for _, e := range experiments {
		if err := e.make().Read("../../results/published"); err != nil {
			t.Errorf("%s: %v", e.name, err)
		}
	}
}

// A failed run is kept and named; only a cancelled one stops the experiment.
func TestFailuresRecorded(t *testing.T) {
	var f claims.Failures
	if err := recordFailure(context.Background(), &f, errors.New("x-c800-r2: 587 of 4656 calls failed")); err != nil {
		t.Fatalf("recordFailure: got %v; want nil", err)
	}
	if got := f.Setup(); len(got) != 1 || !strings.Contains(got[0], "587 of 4656") {
		t.Errorf("setup: got %q; want the failed run named", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := recordFailure(ctx, &f, errors.New("y")); err == nil {
		t.Error("recordFailure after cancel: got nil; want the context's error")
	}
}

// java-rpc-2015's set-up names this run's prime, warm-up bound and quiet wait.
func TestJavaSettingsOnRecord(t *testing.T) {
	e := newJava2015()
	if err := e.Read("../../results/published"); err != nil {
		t.Fatal(err)
	}
	e.Rest = map[string]claims.JITRest{"ice": {Rounds: 1, AtRest: true}}
	e.Quiet = map[string]claims.QuietAfter{"ice": {After: javaQuietStep, FirstBusy: 0.5, Quiet: true}, "grpc": {After: javaQuietMax}}
	setup := strings.Join(e.Judge(Options{}.setup()).Setup, "\n")
	for _, want := range []string{
		"after un-recorded 2s runs at each concurrency", "(at most 2s)", "at most 20s: ice 1 rounds",
		"ice 0.5 s (50 % busy in the first 500ms)", "grpc still above 10 % busy after 20.0 s",
		"the server used under 10 % of a core",
	} {
		if !strings.Contains(setup, want) {
			t.Errorf("set-up lacks %q:\n%s", want, setup)
		}
	}
}

// Every variant's front environment belongs to one of claims' variant paths,
// and every variant has one.
func TestGrowthEnv(t *testing.T) {
	for _, p := range claims.GrowthPaths {
		if _, ok := growthEnv[p.Name]; ok == p.Published {
			t.Errorf("%s (published %v): environment given %v; want one for each variant only", p.Name, p.Published, ok)
		}
	}
	if len(growthEnv) != 2 {
		t.Errorf("growthEnv names %d paths; want the 2 variants", len(growthEnv))
	}
}

// fakeNet is a Net whose link is refused: nothing runs over it.
type fakeNet struct {
	refused string
	entered []string
	left    int
}

func (f *fakeNet) Enter(_ context.Context, label string) (string, error) {
	f.entered = append(f.entered, label)
	return f.refused, nil
}
func (f *fakeNet) Leave(context.Context)                                    { f.left++ }
func (f *fakeNet) Runner(string) runner.Runner                              { return nil }
func (f *fakeNet) PlaceServer(*measure.ServerProcConfig, string, ...string) {}
func (f *fakeNet) Watch(*measure.RunPath)                                   {}
func (f *fakeNet) Where(role string) (string, string)                       { return role + "-host", "198.18.0.9" }
func (f *fakeNet) Checks() []results.LinkCheck {
	return []results.LinkCheck{{Link: "lan", AskedRTTUs: 200, AddedRTTUs: 900, Refused: f.refused}}
}

// A reproduction with its network back: only the experiment that has the
// variant takes a link; a refused link fails the experiment with its reason,
// the link's check on the record, and the link is left on the way out.
func TestReproduceAcrossRefusedLink(t *testing.T) {
	o := Options{Dir: t.TempDir(), Published: "../../results/published", Link: "lan"}
	o.Net = &fakeNet{}
	if _, err := Run(context.Background(), o, []string{"php-go-growth"}); err == nil || !strings.Contains(err.Error(), "no network variant") {
		t.Errorf("php-go-growth with a link: got %v; want no network variant", err)
	}
	net := &fakeNet{refused: "link lan: the link added 900 µs to the round trip against 200 µs asked"}
	o.Net = net
	secs, err := Run(context.Background(), o, []string{"go-grpc-thrift-aerospike"})
	if err != nil {
		t.Fatal(err)
	}
	if len(secs) != 1 || !strings.Contains(secs[0].Err, "900 µs") || len(secs[0].Links) != 1 {
		t.Fatalf("got %+v; want the experiment failed with the refusal and the link's check", secs)
	}
	if !slices.Equal(net.entered, []string{"lan"}) || net.left != 1 {
		t.Errorf("entered %v, left %d times; want [lan] once each", net.entered, net.left)
	}
	for _, l := range secs[0].Setup {
		if strings.HasPrefix(l, "Here:") && !strings.Contains(l, "across the lan link") {
			t.Errorf("set-up %q; want the link named", l)
		}
	}
}

// The set-up line on how the link held under load: from the delayers' record
// and the check after the runs, once (put again, it replaces the earlier one),
// and none for a link with nothing on record.
func TestWithLinkLine(t *testing.T) {
	held := results.LinkCheck{Link: "lan", AskedRTTUs: 200, AddedRTTUs: 210}
	drifted := results.LinkCheck{Link: "lan", AskedRTTUs: 200, AddedRTTUs: 260, AfterRTTUs: 450, AfterAddedRTTUs: 327,
		Drift: "after the cells the link added 327 µs against 200 asked", Delayer: &results.LinkDelayer{Packets: 9000, LateP50Us: 98, LateP99Us: 13407, CPUSeconds: 118.6}}
	for _, tc := range []struct {
		name   string
		checks []results.LinkCheck
		want   []string
	}{
		{"nothing on record", []results.LinkCheck{held}, nil},
		{"drifted", []results.LinkCheck{drifted}, []string{"a median 98 µs and a p99 13407 µs later than due", "118.6 s of CPU", "added 327 µs to the round trip against 200 asked (260 before them)", "slower than lan under this load"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setup := withLinkLine(withLinkLine([]string{"Here: x"}, tc.checks), tc.checks)
			var lines []string
			for _, l := range setup {
				if strings.HasPrefix(l, linkLinePrefix) {
					lines = append(lines, l)
				}
			}
			if tc.want == nil {
				if len(lines) != 0 {
					t.Errorf("got %q; want no link line", lines)
				}
				return
			}
			if len(lines) != 1 {
				t.Fatalf("got %d link lines %q; want one", len(lines), lines)
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("line %q; want %q in it", lines[0], w)
				}
			}
		})
	}
}
