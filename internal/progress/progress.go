package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// Package progress is a matrix run's progress line and its ETA.
//
// Progress prints "[ 12/213] php-grpc-datalist-200-c50 r2/3  elapsed 1m02s  ETA 4m10s"
// on stderr: one line per run, or one line redrawn in place on a terminal.
//
// The ETA comes from measured wall times: per client (go, php, java ... — their
// start-up and per-run costs differ by an order of magnitude), the wall time its
// runs took so far against the time they were planned to take, applied to that
// client's remaining planned time. A client with no run measured yet uses the
// ratio of all clients measured so far, or the plan itself at the start.
type Progress struct {
	w       io.Writer
	tty     bool
	total   int                 // runs
	ended   int                 // runs finished or skipped
	already map[string]int      // repeats a resumed cell had
	repeats func(plan.Cell) int // the rounds a cell is timed in (Spec.RoundsFor)
	started time.Time
	// per client: planned seconds still to run; measured wall and planned seconds
	// of the runs done
	left       map[string]float64
	wall, plan map[string]float64
	current    string
}

// New is the progress of running todo, each cell repeats(c) times, less the
// repeats already[name] a resumed run kept.
func New(w io.Writer, todo []plan.Cell, repeats func(plan.Cell) int, already map[string]int) *Progress {
	p := &Progress{w: w, repeats: repeats, started: time.Now(),
		left: map[string]float64{}, wall: map[string]float64{}, plan: map[string]float64{}, already: map[string]int{}}
	for _, c := range todo {
		p.already[c.Name()] = already[c.Name()]
		runs := repeats(c) - p.already[c.Name()]
		p.total += runs
		p.left[c.Client] += plannedSeconds(c.Load) * float64(runs)
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// plannedSeconds guesses one run's wall time: its warm-up and duration plus a
// second for start-up; n-only runs are guessed at two seconds; an auto warm-up at
// one second (the measured ratio corrects all of it).
func plannedSeconds(l plan.Load) float64 {
	d := l.Duration.D().Seconds()
	if d == 0 {
		d = 2
	}
	w := l.Warmup.D().Seconds()
	if l.Warmup.IsAuto() {
		w = min(1, l.WarmupBound().Seconds())
	}
	return w + d + 1
}

// eta is the remaining time as the measured ratios predict it.
func (p *Progress) eta() time.Duration {
	var wall, plan float64
	for c := range p.plan {
		wall += p.wall[c]
		plan += p.plan[c]
	}
	global := 1.0
	if plan > 0 {
		global = wall / plan
	}
	var left float64
	for c, l := range p.left {
		ratio := global
		if p.plan[c] > 0 {
			ratio = p.wall[c] / p.plan[c]
		}
		left += l * ratio
	}
	return time.Duration(left * float64(time.Second))
}

func (p *Progress) Start(c plan.Cell, repeat int) {
	if p == nil || p.w == nil {
		return
	}
	elapsed := time.Since(p.started)
	eta := fmtDur(p.eta())
	if len(p.plan) == 0 {
		eta = "~" + eta // nothing measured yet: the plan itself
	}
	p.current = c.Name()
	line := fmt.Sprintf("[%3d/%d] %s r%d/%d  elapsed %s  ETA %s", p.ended+1, p.total, c.Name(), repeat, p.repeats(c), fmtDur(elapsed), eta)
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// Done counts one run of c as finished after wall.
func (p *Progress) Done(c plan.Cell, wall time.Duration) {
	if p == nil {
		return
	}
	p.ended++
	ps := plannedSeconds(c.Load)
	p.left[c.Client] -= ps
	p.wall[c.Client] += wall.Seconds()
	p.plan[c.Client] += ps
}

// Add counts one more run of c than planned (a round Spec.Precision added).
func (p *Progress) Add(c plan.Cell) {
	if p == nil {
		return
	}
	p.total++
	p.left[c.Client] += plannedSeconds(c.Load)
}

// Skip counts every remaining run of a cell that will not be timed.
func (p *Progress) Skip(c plan.Cell) {
	if p == nil {
		return
	}
	p.SkipRest(c, p.repeats(c)-p.already[c.Name()])
}

// SkipRest counts n runs of c as not to be run.
func (p *Progress) SkipRest(c plan.Cell, n int) {
	if p == nil || n <= 0 {
		return
	}
	p.ended += n
	p.left[c.Client] -= plannedSeconds(c.Load) * float64(n)
}

// Note prints a line of its own (server starts, verify, failures).
func (p *Progress) Note(msg string) {
	if p == nil || p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
	} else {
		fmt.Fprintln(p.w, msg)
	}
}

func (p *Progress) Finish() {
	if p == nil || p.w == nil {
		return
	}
	p.Note(fmt.Sprintf("%d runs in %s", p.total, fmtDur(time.Since(p.started))))
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}
