package reproduce

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rpcbed/rpcbed/internal/analysis/claims"
	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// The experiments' runs, built apart from running them: each function below is
// pure (its runs follow from its arguments alone, in the order they run), and
// TestJobsGolden prints every one of them (testdata/jobs.golden).

// configure sets go-grpc-thrift-aerospike's run length and repeats.
func (e *grpcThrift) configure(quick bool) {
	e.Dur, e.Repeats = 3*time.Second, 3
	if quick {
		e.Dur, e.Repeats = 300*time.Millisecond, 2
	}
}

// gtJob is one timed run of go-grpc-thrift-aerospike and the key its figures
// are filed under.
type gtJob struct {
	Key   claims.GTKey
	Job   measure.Job
	Round int // the round it belongs to (claims.Run's Round)
}

// grpcThriftJobs are e's timed runs against go-server at addrs: each repeat
// is a round of every level, both protocols at a level one after the other in
// a fresh random order (roundOrder), so the round's ratio cancels the drift.
func grpcThriftJobs(e claims.GRPCThrift, quick bool, addrs map[string]string) []gtJob {
	var jobs []gtJob
	for r := 1; r <= e.Repeats; r++ {
		for _, c := range e.Levels {
			for _, proto := range roundOrder([]string{"grpc", "thrift"}, c, r) {
				jobs = append(jobs, gtRoundJob(e, proto, c, r, quick, addrs))
			}
		}
	}
	return jobs
}

// gtRoundJob is repeat r of proto at c: a base repeat, or one of a round the
// precision loop adds (r past e.Repeats).
func gtRoundJob(e claims.GRPCThrift, proto string, c, r int, quick bool, addrs map[string]string) gtJob {
	args := []string{"-proto", proto, "-call", "datatype", "-c", strconv.Itoa(c), "-t", plan.Seconds(e.Dur), "-addr", addrs[proto]}
	if !quick {
		args = append(args, "-warmup", "auto", "-warmup-max", "2s")
	}
	return gtJob{Key: claims.GTKey{Proto: proto, C: c}, Job: measure.Job{
		Name: fmt.Sprintf("aerospike-go-%s-datatype-c%d-r%d", proto, c, r), Client: "go", Args: args,
		Proto: proto, Call: "datatype", Worker: true, Timeout: e.Dur + 2*time.Minute}, Round: r}
}

// configure sets php-go-growth's burst size and repeats (and, quick, its sizes).
func (e *growth) configure(quick bool) {
	e.AbN, e.Repeats = 200, 3
	if quick {
		e.AbN, e.Repeats, e.Items = 20, 2, e.Items[:2]
	}
}

// sizeJob is one verified go-client call whose response size php-go-growth
// records as the backend message's.
type sizeJob struct {
	Proto string
	Items int
	Job   measure.Job
}

// growthSizeJobs are one call per protocol and size against go-server at addrs.
func growthSizeJobs(items []int, addrs map[string]string) []sizeJob {
	var jobs []sizeJob
	for _, proto := range []string{"grpc", "http"} {
		for _, n := range items {
			jobs = append(jobs, sizeJob{Proto: proto, Items: n, Job: measure.Job{
				Name: fmt.Sprintf("growth-size-%s-%d", proto, n), Client: "go", Timeout: time.Minute,
				Args: []string{"-proto", proto, "-call", "datalist", "-items", strconv.Itoa(n), "-c", "1", "-n", "1", "-k", "-addr", addrs[proto]}}})
		}
	}
	return jobs
}

// burstJob is one ab run on a growth path: an untimed warm-up burst, or a
// timed burst of round Round filed under Key.
type burstJob struct {
	Key    claims.GKey
	Warmup bool
	Job    measure.Job
	Round  int
}

// growthURL is path p's request for n items at its front's url.
func growthURL(p claims.GrowthPath, url string, n int) string {
	u := fmt.Sprintf("%s?n=%d", url, n)
	if p.Front == "php" {
		u += "&proto=" + p.Proto
	}
	return u
}

// growthWarmupJobs are path p's untimed bursts of 20 against its front at url,
// one at every size it runs at, ab running on local.
func growthWarmupJobs(p claims.GrowthPath, items []int, url string, local runner.Runner) []burstJob {
	var jobs []burstJob
	for _, n := range claims.VariantSizes(p, items) {
		jobs = append(jobs, burstJob{Key: claims.GKey{Path: p.Name, Items: n}, Warmup: true,
			Job: abJob(local, fmt.Sprintf("growth-%s-%d-warmup", p.Name, n), "-q", "-c", "10", "-n", "20", "-k", growthURL(p, url, n))})
	}
	return jobs
}

// growthRoundJobs are the timed bursts of e.AbN against the fronts at urls
// (path name -> its front's url): each repeat is a round of every size, the
// paths at a size one after the other in a fresh random order (roundOrder), so
// a comparison between paths reads each round's bursts side by side.
func growthRoundJobs(e claims.Growth, urls map[string]string, local runner.Runner) []burstJob {
	var jobs []burstJob
	for r := 1; r <= e.Repeats; r++ {
		for _, n := range e.Items {
			var names []string
			for _, p := range claims.GrowthPaths {
				if _, ok := urls[p.Name]; ok && slices.Contains(claims.VariantSizes(p, e.Items), n) {
					names = append(names, p.Name)
				}
			}
			for _, name := range roundOrder(names, n, r) {
				p := claims.GrowthPathNamed(name)
				jobs = append(jobs, burstJob{Key: claims.GKey{Path: name, Items: n}, Round: r,
					Job: abJob(local, fmt.Sprintf("growth-%s-%d-r%d", name, n, r), "-c", strconv.Itoa(e.AbN), "-n", strconv.Itoa(e.AbN), "-k", growthURL(p, urls[name], n))})
			}
		}
	}
	return jobs
}

// abJob is one ab run on local (no image carries ab).
func abJob(local runner.Runner, name string, args ...string) measure.Job {
	prog := measure.Program{Args: append([]string{"ab"}, args...)}
	return measure.Job{Name: name, Prog: &prog, Runner: local, AB: true, Timeout: 5 * time.Minute}
}

// configure sets java-rpc-2015's row length and repeats (and, quick, its levels).
func (e *java2015) configure(quick bool) {
	e.Dur, e.Repeats = 2*time.Second, 3
	if quick {
		e.Dur, e.Repeats, e.Levels = 300*time.Millisecond, 2, e.Levels[:2]
	}
}

// javaJob is one java-client run of framework fw against its server at addr.
func javaJob(fw, addr, name string, args ...string) measure.Job {
	return measure.Job{Name: name, Client: "java", Worker: true, Proto: fw, Call: "datatype", Timeout: 3 * time.Minute,
		Args: append([]string{"-proto", fw, "-call", "datatype", "-addr", addr}, args...)}
}

// javaFirstJob is the first second from cold at c=1.
func javaFirstJob(fw, addr string) measure.Job {
	return javaJob(fw, addr, fmt.Sprintf("java2015-%s-c1-first-second", fw), "-c", "1", "-t", "1s")
}

// javaPrimeJobs are the un-recorded javaPrime runs, one per level.
func javaPrimeJobs(fw, addr string, levels []int) []measure.Job {
	var jobs []measure.Job
	for _, c := range levels {
		jobs = append(jobs, javaJob(fw, addr, fmt.Sprintf("java2015-%s-c%d-prime", fw, c), "-c", strconv.Itoa(c), "-t", javaPrime))
	}
	return jobs
}

// javaRestJobs are round's 1 s runs, one per level, while the JITs settle.
func javaRestJobs(fw, addr string, levels []int, round int) []measure.Job {
	var jobs []measure.Job
	for _, c := range levels {
		jobs = append(jobs, javaJob(fw, addr, fmt.Sprintf("java2015-%s-c%d-rest%d", fw, c, round), "-c", strconv.Itoa(c), "-t", "1s"))
	}
	return jobs
}

// javaRow is one recorded row run and the key its figures are filed under.
type javaRow struct {
	Key   claims.JKey
	Job   measure.Job
	Round int // the round it belongs to (claims.Run's Round)
}

// javaRowJobs are the recorded rows of the frameworks at addrs (framework ->
// its server's address): each repeat is a round of every level, every
// framework once at a level in a fresh random order (roundOrder), so Ice's
// lead at a level is read from each round's ratio (the drift between rounds
// cancels).
func javaRowJobs(e claims.Java2015, addrs map[string]string, quick bool) []javaRow {
	var fws []string
	for _, fw := range claims.JavaFrameworks {
		if _, ok := addrs[fw]; ok {
			fws = append(fws, fw)
		}
	}
	var jobs []javaRow
	for r := 1; r <= e.Repeats; r++ {
		for _, c := range e.Levels {
			for _, fw := range roundOrder(fws, c, r) {
				jobs = append(jobs, javaRowJob(e, fw, addrs[fw], c, r, quick))
			}
		}
	}
	return jobs
}

// javaRowJob is repeat r of framework fw at c: a base repeat, or one of a
// round the precision loop adds (r past e.Repeats).
func javaRowJob(e claims.Java2015, fw, addr string, c, r int, quick bool) javaRow {
	args := []string{"-c", strconv.Itoa(c), "-t", plan.Seconds(e.Dur)}
	if !quick {
		args = append(args, "-warmup", "auto", "-warmup-max", javaWarmupMax)
	}
	return javaRow{Key: claims.JKey{FW: fw, C: c}, Job: javaJob(fw, addr, fmt.Sprintf("java2015-%s-c%d-r%d", fw, c, r), args...), Round: r}
}
