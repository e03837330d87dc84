package matrix

import (
	"bytes"
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
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

// verify runs one call per client x protocol x call the group's cells need, from
// every client task (through the client's worker, which then stays warm for the
// timed runs), unless a previous (resumed) pass already checked it.
func (e *executor) verify(ctx context.Context, g *groupRun) error {
	seen := map[string]bool{}
	for _, c := range g.cells {
		pair := c.Pair()
		if seen[pair] {
			continue
		}
		seen[pair] = true
		if v, ok := e.verified[pair]; ok && v.Status == results.StatusOK {
			continue
		}
		e.prog.Note("verify " + pair)
		outs, err := e.pl.untimed(ctx, g, untimedRun{name: "verify-" + pair, c: c, l: plan.Load{N: 1, Conns: 1}, verify: true, timeout: 90 * time.Second})
		if err != nil {
			return err
		}
		e.verified[pair] = verdict(pair, outs)
		e.run.Verify = e.verifyList()
		if err := results.WriteJSON(filepath.Join(e.o.Dir, results.VerifyFile), e.run.Verify); err != nil {
			return err
		}
	}
	return nil
}

// verdict is a pair's verify record from its tasks' outcomes: ok when every
// task's call was.
func verdict(pair string, outs []taskOutcome) results.Verify {
	v := results.Verify{Pair: pair, Status: results.StatusOK}
	if len(outs) > 0 {
		v.ExitCode, v.Raw = outs[0].res.ExitCode, outs[0].raw
	}
	var errs []string
	for _, o := range outs {
		err := o.err
		if err == nil {
			err = checkVerify(o.res)
		}
		if err == nil {
			continue
		}
		if v.ExitCode == 0 {
			v.ExitCode = o.res.ExitCode
		}
		msg := runner.OneLine(err.Error())
		if o.where != "" {
			msg = o.where + ": " + msg
		}
		errs = append(errs, msg)
	}
	if len(errs) > 0 {
		v.Status, v.Error = results.StatusFailed, joinErrs(errs)
	}
	return v
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
		return fmt.Errorf("exit code %d%s: %s", res.ExitCode, measure.ExitMeaning(res.ExitCode), runner.LastLine(res.Stderr))
	}
	r, err := report.ParseClient(bytes.NewReader(res.Stdout))
	if err != nil {
		return fmt.Errorf("report: %v", err)
	}
	if r.Complete < 1 || r.Failed > 0 {
		return fmt.Errorf("%d complete, %d failed (%s)", r.Complete, r.Failed, measure.ErrorKinds(&r))
	}
	return nil
}
