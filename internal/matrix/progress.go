package matrix

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress prints "[ 12/72] php-grpc-datalist-200-c50 r2/3  elapsed 1m02s  ETA 4m10s"
// on stderr: one line per run, or one line redrawn in place on a terminal. The ETA
// is the remaining planned time scaled by how the planned time has compared with
// the real time so far (start-up, verify and server starts included).
type progress struct {
	w       io.Writer
	tty     bool
	total   int // cells
	repeats int
	i       int // cells started
	started time.Time
	// planned seconds of all runs, and of those done
	planTotal, planDone float64
	current             string
}

func newProgress(w io.Writer, todo []Cell, repeats int) *progress {
	p := &progress{w: w, total: len(todo), repeats: repeats, started: time.Now()}
	for _, c := range todo {
		p.planTotal += plannedSeconds(c.Load) * float64(repeats)
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// plannedSeconds guesses one run's wall time: its warm-up and duration plus a
// second for start-up; n-only runs are guessed at two seconds.
func plannedSeconds(l Load) float64 {
	d := l.Duration.D().Seconds()
	if d == 0 {
		d = 2
	}
	return l.Warmup.D().Seconds() + d + 1
}

func (p *progress) start(c Cell, repeat int) {
	if p == nil || p.w == nil {
		return
	}
	if repeat == 1 {
		p.i++
	}
	elapsed := time.Since(p.started)
	eta := "?"
	if p.planDone > 0 {
		rate := elapsed.Seconds() / p.planDone
		eta = fmtDur(time.Duration((p.planTotal - p.planDone) * rate * float64(time.Second)))
	} else if p.planTotal > 0 {
		eta = "~" + fmtDur(time.Duration(p.planTotal*float64(time.Second)))
	}
	p.current = c.Name()
	line := fmt.Sprintf("[%3d/%d] %s r%d/%d  elapsed %s  ETA %s", p.i, p.total, c.Name(), repeat, p.repeats, fmtDur(elapsed), eta)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// done counts one run of c as finished (or not to be run).
func (p *progress) done(c Cell) {
	if p == nil {
		return
	}
	p.planDone += plannedSeconds(c.Load)
}

// skip counts every run of a cell that will not be timed.
func (p *progress) skip(c Cell) {
	if p == nil {
		return
	}
	p.i++
	p.planTotal -= plannedSeconds(c.Load) * float64(p.repeats)
}

// note prints a line of its own (server starts, verify, failures).
func (p *progress) note(msg string) {
	if p == nil || p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
	} else {
		fmt.Fprintln(p.w, msg)
	}
}

func (p *progress) finish() {
	if p == nil || p.w == nil {
		return
	}
	p.note(fmt.Sprintf("%d cells in %s", p.total, fmtDur(time.Since(p.started))))
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
