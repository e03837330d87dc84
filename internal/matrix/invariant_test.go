package matrix

import (
	"context"
	"github.com/rpcbed/rpcbed/internal/measure"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/testbed"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TestInvariantRealMatrix runs a short real matrix with all three clients under
// the local runner (client and server pinned to a core each when taskset is
// there) and checks the CPU invariant of docs/method.md section 3 on every
// repeat of every cell: CPU over the measured window / window length <= the
// cores that side may use + 5 %, client and server. php and java rows run when
// their builds are here (make setup-php, make setup-java), or when RPCBED_REQUIRE
// asks for them.
func TestInvariantRealMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds go-server and go-client, runs every client")
	}
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	root := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin")+"/", "./go-server", "./go-client")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, d := range []string{"php-client", "java-client"} {
		if err := os.Symlink(filepath.Join(repo, d), filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	clients := "go: [grpc, http]"
	missing := func(dep, why string) {
		if testbed.Required(dep) {
			t.Fatalf("%s (RPCBED_REQUIRE=%s)", why, os.Getenv("RPCBED_REQUIRE"))
		}
		t.Logf("%s rows skipped: %s", dep, why)
	}
	_, phpErr := exec.LookPath("php")
	_, extErr := os.Stat(filepath.Join(repo, "php-client", "ext", "build", "grpc.so"))
	switch {
	case phpErr != nil:
		missing("php", "php is not installed (make setup-php)")
	case extErr != nil:
		missing("php", "php-client/ext/build/grpc.so is not built (make setup-php)")
	default:
		clients += ", php: [grpc, thrift]"
	}
	_, javaErr := exec.LookPath("java")
	_, jarErr := os.Stat(filepath.Join(repo, "java-client", "target", "java-client.jar"))
	switch {
	case javaErr != nil:
		missing("java", "java is not installed (make setup-java)")
	case jarErr != nil:
		missing("java", "java-client/target/java-client.jar is not built (make setup-java)")
	default:
		clients += ", java: [grpc, ice]"
	}
	spec, err := plan.ParseSpec([]byte("clients: {" + clients + "}\nitems: [2]\nconcurrency: [1, 4]\n" +
		"load: {duration: 0.4s, warmup: 0.3s}\nrepeats: 2\nclient: {cpuset: \"1\"}\nserver: {cpuset: \"0\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	l := &runner.Local{Dir: root}
	run, err := Execute(ctx, Options{Spec: spec, Dir: t.TempDir(), Runner: l, RunnerName: "local", Programs: measure.Programs{Root: root}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Cells) != len(spec.Plan()) {
		t.Fatalf("got %d cells; want %d", len(run.Cells), len(spec.Plan()))
	}
	for _, c := range run.Cells {
		if c.Status != results.StatusOK {
			t.Errorf("%s: got status %s (%s); want ok", c.Name, c.Status, c.Error)
			continue
		}
		for _, r := range c.Repeats {
			w := r.Window
			if r.Report == nil || w == nil {
				t.Errorf("%s r%d: no report or window (%s)", c.Name, r.Index, r.Error)
				continue
			}
			if r.Has(results.FlagCPUInvariant) {
				t.Errorf("%s r%d: flagged %s: %v", c.Name, r.Index, results.FlagCPUInvariant, r.Notes)
			}
			for _, side := range []struct {
				name        string
				busy, cores float64
				known       bool
			}{{"client", w.ClientBusy, w.ClientCores, true}, {"server", w.ServerBusy, w.ServerCores, w.ServerKnown}} {
				if !side.known {
					continue
				}
				if side.cores <= 0 || side.busy > side.cores*(1+results.CPUAllowance) {
					t.Errorf("%s r%d: %s busy %.3f cores over a %.3f s window; it may use %v (+5 %%)", c.Name, r.Index, side.name, side.busy, w.Seconds, side.cores)
				}
			}
			// Clients that print report v1.1 measure over their own window, and
			// go-server is sampled over it.
			if x := r.Report.Rpcbed; x != nil && x.V11() {
				if w.Source != "report" || w.Seconds <= 0 || w.ClientCPUS <= 0 {
					t.Errorf("%s r%d: window %+v; want the report's, with the client's CPU", c.Name, r.Index, w)
				}
				if c.ServerLang == "go" && (!w.ServerKnown || w.ServerCalls <= 0 || w.ServerCPUS <= 0) {
					t.Errorf("%s r%d: server over the window: %+v; want calls and CPU", c.Name, r.Index, w)
				}
			}
		}
	}
}
