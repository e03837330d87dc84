// Package cost is the data of rpcbed's deterministic cost (docs/cost.md): what
// one call costs in counts that do not depend on the machine's speed
// (instructions, simulated cache misses, estimated cycles, system calls, wire
// bytes), read from valgrind's callgrind files (Parse), the marginal cost between
// two runs of different lengths (Marginal), the table that maps functions to
// layers (Layers), and a cost run's record, cost.json (Result). The cells come
// from costplan, costrun runs them, coststats compares runs (the gate) and
// costrender prints them.
package cost

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Profile is one callgrind output file: its events, its total and the self cost
// of every function (exclusive: what the function's own instructions did, not
// its callees').
type Profile struct {
	Cmd    string
	PID    int
	Thread int // with --separate-threads=yes: the thread's number (1 = the main one)
	// Caches are the simulated caches from the desc: lines (I1, D1, LL ->
	// "32768 B, 64 B, 8-way associative").
	Caches map[string]string
	Events []string
	// Totals is the file's total, from its `totals:` line (or `summary:` when the
	// file has no totals line): one of the two, never both.
	Totals []uint64
	// Self is each function's self cost, keyed "OBJECT\x00FUNCTION" (Key).
	Self map[string][]uint64
	// Calls counts the calls made to each function (from `calls=` lines), keyed
	// as Self.
	Calls map[string]uint64
}

// Key is Self's key for a function in an object file.
func Key(object, function string) string { return object + "\x00" + function }

// SplitKey gives back Key's object and function.
func SplitKey(k string) (object, function string) {
	object, function, _ = strings.Cut(k, "\x00")
	return object, function
}

// Event gives the total of one event, 0 when the file does not have it.
func (p *Profile) Event(name string) uint64 {
	for i, e := range p.Events {
		if e == name && i < len(p.Totals) {
			return p.Totals[i]
		}
	}
	return 0
}

// maxLine bounds one line of a callgrind file: long C++ or Go names stay well
// below it; anything longer is not callgrind's output.
const maxLine = 1 << 20

// Parse reads one callgrind output file (format version 1, as callgrind 3.x
// writes it, compressed names or not).
func Parse(r io.Reader) (*Profile, error) {
	p := &Profile{Self: map[string][]uint64{}, Calls: map[string]uint64{}, Caches: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	names := map[string]map[string]string{} // kind (ob, fl, fn) -> id -> name
	for _, k := range []string{"ob", "fl", "fn"} {
		names[k] = map[string]string{}
	}
	var (
		object, function string
		cobject, cfn     string
		afterCalls       bool // the next cost line is a call's inclusive cost
		summary          []uint64
		haveTotals       bool
		lineNo           int
		npos             = 1
		sawEvents        bool
	)
	// name reads "(ID) NAME", "(ID)" or "NAME" for a kind of compressed name.
	name := func(kind, v string) (string, error) {
		if !strings.HasPrefix(v, "(") {
			return v, nil
		}
		end := strings.IndexByte(v, ')')
		if end < 0 {
			return "", fmt.Errorf("line %d: %s=%q: no closing parenthesis", lineNo, kind, v)
		}
		id, rest := v[1:end], strings.TrimSpace(v[end+1:])
		if rest != "" {
			names[kind][id] = rest
			return rest, nil
		}
		n, ok := names[kind][id]
		if !ok {
			return "", fmt.Errorf("line %d: %s=(%s) used before it was named", lineNo, kind, id)
		}
		return n, nil
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		c := line[0]
		if (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
			if !sawEvents {
				return nil, fmt.Errorf("line %d: a cost line before the events: line", lineNo)
			}
			cost, err := costLine(line, npos, len(p.Events))
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", lineNo, err)
			}
			if afterCalls {
				afterCalls = false // inclusive cost of a call: the callee's, not this function's
				continue
			}
			k := Key(object, function)
			self := p.Self[k]
			if self == nil {
				self = make([]uint64, len(p.Events))
				p.Self[k] = self
			}
			for i, v := range cost {
				self[i] += v
			}
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if ok && !strings.Contains(key, " ") && !strings.Contains(key, ":") {
			var err error
			switch key {
			case "ob":
				object, err = name("ob", val)
				cobject = object
			case "fl", "fi", "fe":
				_, err = name("fl", val)
			case "fn":
				function, err = name("fn", val)
				cobject = object
			case "cob":
				cobject, err = name("ob", val)
			case "cfi", "cfl":
				_, err = name("fl", val)
			case "cfn":
				cfn, err = name("fn", val)
			case "calls":
				f := strings.Fields(val)
				if len(f) == 0 {
					return nil, fmt.Errorf("line %d: calls= without a count", lineNo)
				}
				n, perr := strconv.ParseUint(f[0], 10, 64)
				if perr != nil {
					return nil, fmt.Errorf("line %d: calls=%q: %v", lineNo, val, perr)
				}
				p.Calls[Key(cobject, cfn)] += n
				cobject = object
				afterCalls = true
			case "jump", "jcnd":
				// --collect-jumps: no cost of its own.
			default:
				// Other key=value lines (none in format 1 today) carry no cost.
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		key, val, ok = strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not a callgrind line", lineNo, trim(line))
		}
		val = strings.TrimSpace(val)
		switch key {
		case "events":
			p.Events = strings.Fields(val)
			sawEvents = len(p.Events) > 0
		case "positions":
			npos = len(strings.Fields(val))
			if npos == 0 {
				npos = 1
			}
		case "cmd":
			p.Cmd = val
		case "desc":
			if k, v, ok := strings.Cut(val, " cache:"); ok && (k == "I1" || k == "D1" || k == "LL") {
				p.Caches[k] = strings.TrimSpace(v)
			}
		case "pid":
			p.PID, _ = strconv.Atoi(val)
		case "thread":
			p.Thread, _ = strconv.Atoi(val)
		case "summary", "totals":
			v, err := numbers(val, len(p.Events))
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: %w", lineNo, key, err)
			}
			if key == "totals" {
				p.Totals, haveTotals = v, true
			} else {
				summary = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if !sawEvents {
		return nil, errors.New("not a callgrind file: no events: line")
	}
	if !haveTotals {
		if summary == nil {
			return nil, errors.New("no totals: or summary: line (the run did not finish its dump)")
		}
		p.Totals = summary
	}
	return p, nil
}

// costLine reads "POSITION... COST..." (a position may be relative: +N, -N, *);
// missing trailing costs are 0.
func costLine(line string, npos, nev int) ([]uint64, error) {
	f := strings.Fields(line)
	if len(f) < npos {
		return nil, fmt.Errorf("cost line %q: fewer fields than positions", trim(line))
	}
	return numbers(strings.Join(f[npos:], " "), nev)
}

func numbers(s string, n int) ([]uint64, error) {
	f := strings.Fields(s)
	if len(f) > n {
		return nil, fmt.Errorf("%d values for %d events", len(f), n)
	}
	v := make([]uint64, n)
	for i, x := range f {
		u, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q: %v", trim(x), err)
		}
		v[i] = u
	}
	return v, nil
}

func trim(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// HasFunction tells whether any function of the profile is named fn.
func (p *Profile) HasFunction(fn string) bool {
	for k := range p.Self {
		if _, f := SplitKey(k); f == fn {
			return true
		}
	}
	return false
}

// timeDrivenRoots name the threads whose work follows the clock, not the calls:
// Go's sysmon, the runtime's watchdog, wakes every 20 µs to 10 ms whatever the
// program does. Under callgrind a call takes 50-100 times its native time, so
// such a thread would add to every call in proportion to how slow valgrind ran
// (docs/cost.md, "Time-driven work").
var timeDrivenRoots = []string{"runtime.sysmon"}

// SplitTimeDriven separates the time-driven threads' profiles (one profile per
// thread, --separate-threads=yes) from the others.
func SplitTimeDriven(profiles []*Profile) (counted, timeDriven []*Profile) {
	for _, p := range profiles {
		td := false
		for _, fn := range timeDrivenRoots {
			if p.HasFunction(fn) {
				td = true
			}
		}
		if td {
			timeDriven = append(timeDriven, p)
		} else {
			counted = append(counted, p)
		}
	}
	return counted, timeDriven
}

// ParseFile parses one callgrind file.
func ParseFile(file string) (*Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(file), err)
	}
	return p, nil
}

// CheckGeometry refuses a file whose simulated caches are not Geometry's.
func CheckGeometry(p *Profile) error {
	if len(p.Caches) == 0 {
		return fmt.Errorf("callgrind file of pid %d: no cache description (not --cache-sim=yes)", p.PID)
	}
	want := map[string]string{"I1": "32768 B, 64 B, 8-way", "D1": "32768 B, 64 B, 8-way", "LL": "8388608 B, 64 B, 16-way"}
	for k, v := range want {
		if !strings.HasPrefix(p.Caches[k], v) {
			return fmt.Errorf("callgrind file of pid %d: %s cache %q, want %q", p.PID, k, p.Caches[k], v)
		}
	}
	return nil
}

// SplitDriver separates php-client's driver process from its callers. client.php
// forks one caller process per connection (Caller) and keeps a driver: it starts
// them, decodes their results, sorts every latency for the percentiles, prints the
// report and waits for the callers' exit in a polling loop. That is rpcbed's
// bookkeeping, not the call, and part of it follows the clock (the waiting loop)
// or grows as n log n (the sort): two runs of php-thrift-datalist-2-c1 put
// 1.1 M and 2.5 M instructions in the driver over the same 200 calls, their
// callers 92,225 and 92,208 instructions per call. A forked caller's file
// carries its parent's counts up to the fork (they cancel in the marginal); the
// driver is the first process started (FirstPID) of a PHP command line that ran
// as more than one process. A program that does not fork has no driver.
func SplitDriver(profiles []*Profile) (counted, driver []*Profile) {
	pids := map[string][]int{}
	for _, p := range profiles {
		if isPHP(p.Cmd) && !slices.Contains(pids[p.Cmd], p.PID) {
			pids[p.Cmd] = append(pids[p.Cmd], p.PID)
		}
	}
	first := map[string]int{}
	for cmd, ps := range pids {
		first[cmd] = FirstPID(ps, PIDMax)
	}
	for _, p := range profiles {
		if isPHP(p.Cmd) && len(pids[p.Cmd]) > 1 && p.PID == first[p.Cmd] {
			driver = append(driver, p)
		} else {
			counted = append(counted, p)
		}
	}
	return counted, driver
}

// PIDMax is the kernel's pid_max: process IDs are handed out in increasing
// order and wrap around after it.
var PIDMax = readPIDMax()

func readPIDMax() int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 1 << 22 // the kernel's largest
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 1 << 22
	}
	return n
}

// FirstPID is the process of pids that was started first, the kernel handing
// out IDs in increasing order modulo pidMax: the one after the largest gap
// between them, going round. Usually the lowest; not when the IDs wrapped
// between the two starts (a driver 32304 and its caller 454 under pid_max
// 32768, measured: taking the lowest counted the driver as the caller).
func FirstPID(pids []int, pidMax int) int {
	if len(pids) == 0 {
		return 0
	}
	ps := slices.Clone(pids)
	slices.Sort(ps)
	best, gap := ps[0], ps[0]+pidMax-ps[len(ps)-1] // the gap that wraps round
	for i := 1; i < len(ps); i++ {
		if d := ps[i] - ps[i-1]; d > gap {
			best, gap = ps[i], d
		}
	}
	return best
}

// isPHP tells whether a command line runs PHP's binary (php, php8.2).
func isPHP(cmd string) bool {
	f := strings.Fields(cmd)
	return len(f) > 0 && strings.HasPrefix(filepath.Base(f[0]), "php")
}
