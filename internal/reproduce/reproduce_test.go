package reproduce

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/results"
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
