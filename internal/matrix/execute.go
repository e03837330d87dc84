package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"
)

// Options is one matrix run.
type Options struct {
	Spec Spec
	// Dir is the run directory (results/<run>). With Resume, a run started there
	// before is finished: its saved spec is used and only missing cells run.
	Dir    string
	Resume bool
	Runner runner.Runner
	// RunnerName is recorded in matrix.json: docker or local.
	RunnerName string
	Programs   Programs
	// Progress receives the progress line (cell i/N, name, ETA); nil is quiet.
	Progress io.Writer
	// Meta is recorded in a new run (machine, versions, commit); Execute fills ID,
	// Started, Runner and Spec.
	Meta Run
}

// clientCode are the exit codes every rpcbed client shares.
const (
	exitUsage       = 2
	exitVerify      = 3
	exitUnreachable = 4
)

// Execute runs every cell of the plan that has no result file yet, one server
// configuration at a time, and returns the run as saved. A cell that fails is
// recorded with its error and the run goes on; ctx's cancellation stops the run
// after cleaning up (the running cell is not recorded, so Resume redoes it).
func Execute(ctx context.Context, o Options) (*Run, error) {
	run, err := openRun(o)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	cells, err := loadCells(o.Dir)
	if err != nil {
		return nil, err
	}
	for _, c := range cells {
		done[c.Name] = true
	}
	var todo []Cell
	for _, c := range run.Spec.Plan() {
		if !done[c.Name()] {
			todo = append(todo, c)
		}
	}
	verified := map[string]Verify{}
	for _, v := range run.Verify {
		verified[v.Pair] = v
	}
	e := &executor{o: o, run: run, verified: verified, prog: newProgress(o.Progress, todo, run.Spec.Repeats)}
	defer o.Runner.Close()
	for len(todo) > 0 {
		key := todo[0].ServerKey()
		var group []Cell
		for len(todo) > 0 && todo[0].ServerKey() == key {
			group = append(group, todo[0])
			todo = todo[1:]
		}
		if err := e.serverGroup(ctx, key, group); err != nil {
			return nil, err
		}
	}
	e.prog.finish()
	run.Finished = time.Now().UTC()
	if err := writeJSON(filepath.Join(o.Dir, RunFile), run); err != nil {
		return nil, err
	}
	return LoadRun(o.Dir)
}

// openRun creates the run directory and its run.json, or reads them back on Resume.
func openRun(o Options) (*Run, error) {
	if err := os.MkdirAll(filepath.Join(o.Dir, CellsDir), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.Dir, RawDir), 0o755); err != nil {
		return nil, err
	}
	if o.Resume {
		run, err := LoadRun(o.Dir)
		if err != nil {
			return nil, fmt.Errorf("resume: %w", err)
		}
		run.Cells = nil
		run.Finished = time.Time{}
		return run, nil
	}
	if _, err := os.Stat(filepath.Join(o.Dir, RunFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a run: use -resume to finish it, or another -out", o.Dir)
	}
	run := o.Meta
	run.ID = filepath.Base(o.Dir)
	run.Started = time.Now().UTC()
	run.Runner = o.RunnerName
	run.Spec = o.Spec
	if run.Versions == nil {
		run.Versions = map[string]string{}
	}
	b, err := MarshalSpec(o.Spec)
	if err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(filepath.Join(o.Dir, SpecFile), b); err != nil {
		return nil, err
	}
	return &run, writeJSON(filepath.Join(o.Dir, RunFile), run)
}

type executor struct {
	o        Options
	run      *Run
	verified map[string]Verify
	prog     *progress
}

func (e *executor) serverConfig() ServerConfig {
	s := e.run.Spec
	return ServerConfig{Programs: e.o.Programs, Resources: s.Server, Store: s.Store, RedisAddr: s.RedisAddr, AerospikeHosts: s.AerospikeHosts, Auth: *s.Auth}
}

// serverGroup starts one server, verifies, runs its cells and stops it.
func (e *executor) serverGroup(ctx context.Context, key string, cells []Cell) error {
	e.prog.note("starting " + key)
	srv, err := StartServer(ctx, e.o.Runner, key, e.serverConfig())
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, c := range cells {
			e.prog.skip(c)
			if err := e.record(CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: StatusFailed,
				Error: "server " + key + " did not start: " + oneLine(err.Error()), Started: time.Now().UTC(), Finished: time.Now().UTC()}); err != nil {
				return err
			}
		}
		return nil
	}
	defer e.stopServer(srv)

	if *e.run.Spec.Verify {
		if err := e.verify(ctx, srv, cells); err != nil {
			return err
		}
	}
	for _, c := range cells {
		if v, ok := e.verified[c.Pair()]; ok && v.Status != StatusOK {
			e.prog.skip(c)
			now := time.Now().UTC()
			if err := e.record(CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: StatusFailed,
				Error: "verify failed, not timed: " + v.Error, Started: now, Finished: now}); err != nil {
				return err
			}
			continue
		}
		if err := srv.Alive(ctx); err != nil {
			e.prog.note(key + " stopped answering (" + oneLine(err.Error()) + "): restarting it")
			e.stopServer(srv)
			if srv, err = StartServer(ctx, e.o.Runner, key, e.serverConfig()); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				srv = nil
			}
		}
		var res CellResult
		if srv == nil {
			now := time.Now().UTC()
			res = CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: StatusFailed,
				Error: "server " + key + " could not be restarted", Started: now, Finished: now}
		} else {
			res, err = e.cell(ctx, srv, c)
			if err != nil {
				return err
			}
		}
		if err := e.record(res); err != nil {
			return err
		}
		if srv == nil {
			return e.failRest(key, cells, c)
		}
	}
	return nil
}

func (e *executor) failRest(key string, cells []Cell, after Cell) error {
	i := slices.IndexFunc(cells, func(c Cell) bool { return c.Name() == after.Name() })
	for _, c := range cells[i+1:] {
		e.prog.skip(c)
		now := time.Now().UTC()
		if err := e.record(CellResult{Name: c.Name(), Cell: c, Load: c.Load, Status: StatusFailed,
			Error: "server " + key + " could not be restarted", Started: now, Finished: now}); err != nil {
			return err
		}
	}
	return nil
}

func (e *executor) stopServer(srv *Server) {
	if srv == nil || srv.Svc == nil {
		return
	}
	r, _ := srv.Svc.Stop(context.Background())
	os.WriteFile(filepath.Join(e.o.Dir, RawDir, "server-"+srv.Key+".txt"), rawBytes(r.Stdout, r.Stderr), 0o644)
	srv.Svc = nil
}

// verify runs one call per client x protocol x call these cells need, unless a
// previous (resumed) pass already checked it.
func (e *executor) verify(ctx context.Context, srv *Server, cells []Cell) error {
	seen := map[string]bool{}
	for _, c := range cells {
		pair := c.Pair()
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if v, ok := e.verified[pair]; ok && v.Status == StatusOK {
			continue
		}
		e.prog.note("verify " + pair)
		args := clientArgs(c, srv.Addrs[c.Protocol], Load{N: 1})
		args = replaceFlag(args, "-c", "1")
		prog := e.o.Programs.Client(c.Client, args...)
		raw := filepath.Join(RawDir, "verify-"+pair+".txt")
		res, err := e.o.Runner.Run(ctx, runner.Spec{
			Name: "verify-" + pair, Image: prog.Image, Args: prog.Args, Env: prog.Env,
			CPUs: e.run.Spec.Client.CPUs, CPUSet: e.run.Spec.Client.CPUSet, MemoryMB: e.run.Spec.Client.MemoryMB,
			Timeout: 90 * time.Second,
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		os.WriteFile(filepath.Join(e.o.Dir, raw), rawBytes(res.Stdout, res.Stderr), 0o644)
		v := Verify{Pair: pair, Status: StatusOK, ExitCode: res.ExitCode, Raw: raw}
		if err == nil {
			err = checkVerify(res)
		}
		if err != nil {
			v.Status, v.Error = StatusFailed, oneLine(err.Error())
		}
		e.verified[pair] = v
		e.run.Verify = e.verifyList()
		if err := writeJSON(filepath.Join(e.o.Dir, VerifyFile), e.run.Verify); err != nil {
			return err
		}
	}
	return nil
}

func (e *executor) verifyList() []Verify {
	var vs []Verify
	for _, k := range sortedKeys(e.verified) {
		vs = append(vs, e.verified[k])
	}
	return vs
}

// checkVerify accepts a verify run that exited 0 with a report of one complete,
// correct call.
func checkVerify(res runner.Result) error {
	if res.ExitCode != 0 {
		return fmt.Errorf("exit code %d%s: %s", res.ExitCode, exitMeaning(res.ExitCode), lastLine(res.Stderr))
	}
	r, err := report.Parse(bytes.NewReader(res.Stdout))
	if err != nil {
		return fmt.Errorf("report: %v", err)
	}
	if r.Complete < 1 || r.Failed > 0 {
		return fmt.Errorf("%d complete, %d failed (%s)", r.Complete, r.Failed, errorKinds(&r))
	}
	return nil
}

func exitMeaning(code int) string {
	switch code {
	case exitUsage:
		return " (bad arguments)"
	case exitVerify:
		return " (wrong response)"
	case exitUnreachable:
		return " (server unreachable)"
	}
	return ""
}

// cell times one cell Repeats times.
func (e *executor) cell(ctx context.Context, srv *Server, c Cell) (CellResult, error) {
	res := CellResult{Name: c.Name(), Cell: c, Load: c.Load, Started: time.Now().UTC()}
	var errs []string
	for i := 1; i <= e.run.Spec.Repeats; i++ {
		e.prog.start(c, i)
		rep, err := e.repeat(ctx, srv, c, i)
		if err != nil {
			return res, err
		}
		e.prog.done(c)
		res.Repeats = append(res.Repeats, rep)
		if rep.Error != "" {
			errs = append(errs, fmt.Sprintf("r%d: %s", i, rep.Error))
		}
		if rep.Report == nil && (rep.ExitCode == exitUsage || rep.ExitCode == exitVerify || rep.ExitCode == exitUnreachable) {
			// The client refused before timing: another try would refuse the same way.
			for j := i + 1; j <= e.run.Spec.Repeats; j++ {
				e.prog.done(c)
			}
			break
		}
	}
	res.Finished = time.Now().UTC()
	res.Status = StatusFailed
	for _, r := range res.Repeats {
		if r.Report != nil {
			res.Status = StatusOK
		}
	}
	res.Error = strings.Join(errs, "; ")
	return res, nil
}

// repeat runs the client once and measures around it. Only ctx's cancellation is
// returned as an error; everything else is recorded in the Repeat.
func (e *executor) repeat(ctx context.Context, srv *Server, c Cell, i int) (Repeat, error) {
	rep := Repeat{Index: i, Raw: filepath.Join(RawDir, fmt.Sprintf("%s-r%d.txt", c.Name(), i))}
	before, berr := srv.Snapshot(ctx, c.Protocol, c.Call)
	prog := e.o.Programs.Client(c.Client, clientArgs(c, srv.Addrs[c.Protocol], c.Load)...)
	spec := e.run.Spec
	res, err := e.o.Runner.Run(ctx, runner.Spec{
		Name: fmt.Sprintf("%s-r%d", c.Name(), i), Image: prog.Image, Args: prog.Args, Env: prog.Env,
		CPUs: spec.Client.CPUs, CPUSet: spec.Client.CPUSet, MemoryMB: spec.Client.MemoryMB,
		Timeout: runTimeout(c.Load),
	})
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	after, aerr := srv.Snapshot(ctx, c.Protocol, c.Call)
	if werr := os.WriteFile(filepath.Join(e.o.Dir, rep.Raw), rawBytes(res.Stdout, res.Stderr), 0o644); werr != nil {
		return rep, werr
	}
	rep.ExitCode, rep.WallS = res.ExitCode, res.Wall.Seconds()
	rep.ClientCPUS = (res.CPUUser + res.CPUSystem).Seconds()
	if err != nil {
		rep.Error = oneLine(err.Error())
		return rep, nil
	}
	if res.ExitCode != 0 {
		rep.Error = fmt.Sprintf("exit code %d%s: %s", res.ExitCode, exitMeaning(res.ExitCode), lastLine(res.Stderr))
		return rep, nil
	}
	r, perr := report.Parse(bytes.NewReader(res.Stdout))
	if perr != nil {
		rep.Error = "report: " + oneLine(perr.Error())
		return rep, nil
	}
	if r.Complete == 0 {
		// Nothing to take a figure from: the report stays in the raw file only.
		rep.Error = fmt.Sprintf("no call completed in the measured %.3f s (%d failed)", r.TimeTakenSeconds, r.Failed)
		return rep, nil
	}
	rep.Report = &r
	if berr == nil && aerr == nil {
		rep.ServerCPUS = after.CPU - before.CPU
		rep.ServerCalls = after.Calls - before.Calls
		if before.Calls < 0 {
			// A Java baseline counts nothing: the client's calls, verify and warm-up included.
			rep.ServerCalls = r.Complete + r.Failed + 1
			if r.Rpcbed != nil {
				rep.ServerCalls += r.Rpcbed.WarmupCalls
			}
		}
		for k, v := range after.Versions {
			e.run.Versions[srv.Key+" "+k] = v
		}
	} else {
		rep.Error = "server usage: " + oneLine(errors.Join(berr, aerr).Error())
	}
	if r.Rpcbed != nil {
		for k, v := range r.Rpcbed.Versions {
			e.run.Versions[c.Client+"-client "+k] = v
		}
	}
	if r.Failed > 0 && rep.Error == "" {
		rep.Error = fmt.Sprintf("%d of %d calls failed (%s)", r.Failed, r.Complete+r.Failed, errorKinds(&r))
	}
	rep.Metrics = metrics(&r, rep.ClientCPUS, rep.ServerCPUS, rep.ServerCalls)
	return rep, nil
}

// record writes a cell's result file atomically and refreshes run.json.
func (e *executor) record(c CellResult) error {
	if err := writeJSON(filepath.Join(e.o.Dir, CellsDir, c.Name+".json"), c); err != nil {
		return err
	}
	if c.Status != StatusOK {
		e.prog.note(c.Name + " failed: " + c.Error)
	}
	return writeJSON(filepath.Join(e.o.Dir, RunFile), e.run)
}

// clientArgs are the flags every rpcbed client takes (go-client's).
func clientArgs(c Cell, addr string, l Load) []string {
	args := []string{"-proto", c.Protocol, "-call", c.Call}
	if c.Call == "datalist" {
		args = append(args, "-items", strconv.Itoa(c.Items))
	}
	args = append(args, "-c", strconv.Itoa(c.Concurrency))
	if l.N > 0 {
		args = append(args, "-n", strconv.FormatInt(l.N, 10))
	}
	if l.Duration > 0 {
		args = append(args, "-t", formatSeconds(l.Duration.D()))
	}
	if l.Warmup > 0 {
		args = append(args, "-warmup", formatSeconds(l.Warmup.D()))
	}
	if c.Protocol == "http" {
		args = append(args, "-k")
	}
	return append(args, "-addr", addr)
}

func replaceFlag(args []string, flag, v string) []string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			args[i+1] = v
		}
	}
	return args
}

func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// runTimeout bounds one client run: its planned time plus room for start-up.
func runTimeout(l Load) time.Duration {
	if l.Timeout > 0 {
		return l.Timeout.D()
	}
	if l.Duration > 0 {
		return l.Warmup.D() + l.Duration.D() + 60*time.Second
	}
	return l.Warmup.D() + 120*time.Second
}

func errorKinds(r *report.Report) string {
	if r.Rpcbed == nil || len(r.Rpcbed.Errors) == 0 {
		return fmt.Sprintf("connect=%d receive=%d length=%d exceptions=%d",
			r.FailedBy.Connect, r.FailedBy.Receive, r.FailedBy.Length, r.FailedBy.Exceptions)
	}
	var kv []string
	for _, k := range sortedKeys(r.Rpcbed.Errors) {
		kv = append(kv, k+"="+strconv.FormatInt(r.Rpcbed.Errors[k], 10))
	}
	return strings.Join(kv, " ")
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			return oneLine(l)
		}
	}
	return "(no stderr)"
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}
