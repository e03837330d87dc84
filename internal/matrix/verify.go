package matrix

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// The verify pass: one call per client x protocol x call before any timing.

// verify runs one call per client x protocol x call these cells need (through the
// client's worker, which then stays warm for the timed runs), unless a previous
// (resumed) pass already checked it.
func (e *executor) verify(ctx context.Context, rp *RunPath, srv *ServerProc, cells []plan.Cell) error {
	seen := map[string]bool{}
	for _, c := range cells {
		pair := c.Pair()
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if v, ok := e.verified[pair]; ok && v.Status == results.StatusOK {
			continue
		}
		e.prog.note("verify " + pair)
		args := clientArgs(c, e.clientAddr(srv, c), plan.Load{N: 1, Conns: 1})
		args = replaceFlag(args, "-c", "1")
		raw := filepath.Join(results.RawDir, "verify-"+pair+".txt")
		var rep results.Repeat
		res, err := rp.run(ctx, &rep, Job{Name: "verify-" + pair, Client: c.Client, Args: args, Proto: c.Protocol, Timeout: 90 * time.Second, Worker: true, Runner: e.clientRunner(c)})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		werr := writeRaw(filepath.Join(e.o.Dir, raw), res.Stdout, res.Stderr)
		v := results.Verify{Pair: pair, Status: results.StatusOK, ExitCode: res.ExitCode, Raw: raw}
		if err == nil {
			err = checkVerify(res)
		}
		if err == nil && werr != nil {
			err = fmt.Errorf("raw file: %w", werr)
		}
		if err != nil {
			v.Status, v.Error = results.StatusFailed, runner.OneLine(err.Error())
		}
		e.verified[pair] = v
		e.run.Verify = e.verifyList()
		if err := results.WriteJSON(filepath.Join(e.o.Dir, results.VerifyFile), e.run.Verify); err != nil {
			return err
		}
	}
	return nil
}

func (e *executor) verifyList() []results.Verify {
	var vs []results.Verify
	for _, k := range slices.Sorted(maps.Keys(e.verified)) {
		vs = append(vs, e.verified[k])
	}
	return vs
}

// checkVerify accepts a verify run that exited 0 with a report of one complete,
// correct call.
func checkVerify(res runner.Result) error {
	if res.ExitCode != 0 {
		return fmt.Errorf("exit code %d%s: %s", res.ExitCode, exitMeaning(res.ExitCode), runner.LastLine(res.Stderr))
	}
	r, err := report.ParseClient(bytes.NewReader(res.Stdout))
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
	case report.ExitUsage:
		return " (bad arguments)"
	case report.ExitVerify:
		return " (wrong response)"
	case report.ExitUnreachable:
		return " (server unreachable)"
	}
	return ""
}
