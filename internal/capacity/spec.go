// Package capacity finds, per cell, the highest offered rate a stack carries
// within a latency budget (an SLO): the open loop's rate searched the way
// Envoy Nighthawk's adaptive load controller searches it (exponential steps up
// to the first breach, then bisection), each step confirmed by a repeat, the
// knee's 95 % interval from paired rounds at the bracketing rates, and at the
// knee which side is the limit (docs/method.md, "Capacity at a latency
// budget"). search.go is the search against any Prober (no I/O); run.go runs it
// on the matrix's run path (measure.RunPath) against real servers; render.go and
// agree.go print and compare what it found.
package capacity

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// SLO is one latency budget: p99 from each call's intended start at most P99,
// and at most Errors of the calls failed.
type SLO struct {
	P99    plan.Duration `yaml:"p99" json:"p99"`
	Errors plan.Fraction `yaml:"errors" json:"errors"`
}

// Name is the SLO as tables print it: "p99 10ms, errors 0.1%".
func (s SLO) Name() string {
	return "p99 " + s.P99.String() + ", errors " + s.Errors.String()
}

// Key is the SLO as file names and CSV columns take it: "p99-10ms".
func (s SLO) Key() string { return "p99-" + s.P99.String() }

// Search is how each cell's knee is searched (the spec's capacity: section).
type Search struct {
	// Start is the first offered rate (calls/s); 0: a quarter of the cell's
	// closed-loop throughput at its concurrency, measured first (one run).
	Start float64 `yaml:"start" json:"start"`
	// Factor multiplies the rate at each step of the exponential phase.
	Factor float64 `yaml:"factor" json:"factor"`
	// Precision ends the bisection: the highest passing and the lowest failing
	// rate at most this share apart.
	Precision plan.Fraction `yaml:"precision" json:"precision"`
	// Accuracy is how far the achieved rate may lie from the offer.
	Accuracy plan.Fraction `yaml:"accuracy" json:"accuracy"`
	// Measure is each step's measuring period, Warmup its un-counted start at
	// the step's rate, Cooldown the pause after it (queues drain, a JVM's
	// collector runs) before the next step.
	Measure  plan.Duration `yaml:"measure" json:"measure"`
	Warmup   plan.Duration `yaml:"warmup" json:"warmup"`
	Cooldown plan.Duration `yaml:"cooldown" json:"cooldown"`
	// Deadline bounds one search, a cell at one SLO (Nighthawk's convergence
	// deadline): past it the cell reports its bracket as not converged. The
	// interval's rounds come after it.
	Deadline plan.Duration `yaml:"deadline" json:"deadline"`
	// Rounds is how many paired rounds at the two bracketing rates make the
	// knee's interval (each round both rates, the order alternating).
	Rounds int `yaml:"rounds" json:"rounds"`
	// Visits is how many times each cell's rounds are run: the first right
	// after its search, each later one once every cell of its server has been
	// searched (another minute's stalls), at the same two rates. Two or more
	// measure how far a knee moves between visits, pooled over the run's
	// cells, and no knee's interval is narrower than that (VisitNoise).
	Visits int `yaml:"visits" json:"visits,omitempty"`
	// MaxRate caps the exponential phase: a cell still within the SLO there is
	// reported as "at least MaxRate".
	MaxRate float64 `yaml:"max_rate" json:"max_rate"`
	// Prime is, per client, how long un-recorded closed-loop runs go on through
	// its worker before the cell's search, until its JIT (and a JVM server's)
	// rests: java's needs load on its one core.
	Prime map[string]plan.Duration `yaml:"prime" json:"prime,omitempty"`
}

// Spec is a capacity spec (capacity.yaml): a matrix spec (its cells, servers,
// cores) with the SLOs to search each cell against and how to search.
type Spec struct {
	Matrix plan.Spec `json:"matrix"`
	SLOs   []SLO     `json:"slo"`
	Search Search    `json:"capacity"`
}

// Defaults of a capacity spec's search.
var defaultSearch = Search{
	Factor: 2, Precision: 0.02, Accuracy: 0.01,
	Measure: plan.Duration(time.Second), Warmup: plan.Duration(200 * time.Millisecond),
	Cooldown: plan.Duration(100 * time.Millisecond), Deadline: plan.Duration(90 * time.Second),
	Rounds: 3, Visits: 1, MaxRate: 200000,
}

// Limits on a capacity spec's own keys.
const (
	maxSLOs   = 8
	maxRounds = 50
	maxVisits = 4
)

// ReadSpec reads and checks a capacity spec file.
func ReadSpec(file string) (Spec, error) {
	f, err := os.Open(file)
	if err != nil {
		return Spec{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, plan.MaxSpecBytes+1))
	if err != nil {
		return Spec{}, err
	}
	s, err := ParseSpec(b)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// ParseSpec reads a capacity spec: its slo: and capacity: keys here, every
// other key as a matrix spec (plan.ParseSpec, with its checks and defaults).
// Errors name the field.
func ParseSpec(b []byte) (Spec, error) {
	if len(b) > plan.MaxSpecBytes {
		return Spec{}, fmt.Errorf("spec: %d bytes; want at most %d", len(b), plan.MaxSpecBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return Spec{}, errors.New("spec: want a mapping of keys such as clients, slo, capacity")
	}
	m := doc.Content[0]
	var sloNode, searchNode *yaml.Node
	rest := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		switch k.Value {
		case "slo":
			sloNode = v
		case "capacity":
			searchNode = v
		default:
			rest.Content = append(rest.Content, k, v)
		}
	}
	s := Spec{Search: defaultSearch}
	if sloNode == nil {
		return Spec{}, fieldErr("slo", "missing: name at least one budget, e.g. slo: {p99: 10ms, errors: 0.1%%}")
	}
	slos, err := decodeSLOs(sloNode)
	if err != nil {
		return Spec{}, err
	}
	s.SLOs = slos
	if searchNode != nil {
		if err := decodeStrict(searchNode, &s.Search); err != nil {
			return Spec{}, fieldErr("capacity", "%v", err)
		}
	}
	if err := s.Search.validate(); err != nil {
		return Spec{}, err
	}
	if len(rest.Content) == 0 {
		return Spec{}, fieldErr("clients", "missing: name the clients and protocols to search")
	}
	mb, err := yaml.Marshal(rest)
	if err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	ms, err := plan.ParseSpec(mb)
	if err != nil {
		return Spec{}, err
	}
	s.Matrix = ms
	return s, nil
}

// decodeSLOs reads slo: as one budget or a list of them.
func decodeSLOs(n *yaml.Node) ([]SLO, error) {
	var nodes []*yaml.Node
	switch n.Kind {
	case yaml.MappingNode:
		nodes = []*yaml.Node{n}
	case yaml.SequenceNode:
		nodes = n.Content
	default:
		return nil, fieldErr("slo", "line %d: want {p99: 10ms, errors: 0.1%%} or a list of them", n.Line)
	}
	if len(nodes) == 0 || len(nodes) > maxSLOs {
		return nil, fieldErr("slo", "%d budgets: want 1..%d", len(nodes), maxSLOs)
	}
	var out []SLO
	seen := map[string]bool{}
	for i, x := range nodes {
		field := "slo"
		if n.Kind == yaml.SequenceNode {
			field = "slo[" + strconv.Itoa(i) + "]"
		}
		if x.Kind != yaml.MappingNode {
			return nil, fieldErr(field, "line %d: want {p99: 10ms, errors: 0.1%%}", x.Line)
		}
		var s SLO
		if err := decodeStrict(x, &s); err != nil {
			return nil, fieldErr(field, "%v", err)
		}
		if s.P99 <= 0 || s.P99.IsAuto() {
			return nil, fieldErr(field+".p99", "want a latency above 0, e.g. 10ms")
		}
		if s.P99.D() > time.Minute {
			return nil, fieldErr(field+".p99", "%v: want at most 1m", s.P99)
		}
		if seen[s.Key()] {
			return nil, fieldErr(field+".p99", "%v given twice", s.P99)
		}
		seen[s.Key()] = true
		out = append(out, s)
	}
	return out, nil
}

// decodeStrict decodes n into v, refusing unknown keys.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		msg := err.Error()
		if i := strings.Index(msg, "field "); i >= 0 {
			if j := strings.Index(msg[i:], " not found"); j >= 0 {
				return fmt.Errorf("unknown key %s", msg[i+len("field "):i+j])
			}
		}
		// A value of the wrong kind: yaml.v3's words without its line numbers,
		// which count lines of the re-encoded section, not of the file.
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.Contains(msg, "line ") {
			msg = msg[i+2:]
		}
		return errors.New(strings.TrimPrefix(msg, "yaml: "))
	}
	return nil
}

func (s Search) validate() error {
	switch {
	case s.Start < 0 || s.Start > 1e7:
		return fieldErr("capacity.start", "%g: want 0 (a quarter of the closed loop's) up to 10000000 calls/s", s.Start)
	case s.Factor < 1.1 || s.Factor > 16:
		return fieldErr("capacity.factor", "%g: want 1.1..16", s.Factor)
	case s.Precision < 0.001 || s.Precision > 0.5:
		return fieldErr("capacity.precision", "%v: want 0.1%%..50%%", s.Precision)
	case s.Accuracy <= 0 || s.Accuracy > 0.2:
		return fieldErr("capacity.accuracy", "%v: want above 0, at most 20%%", s.Accuracy)
	case s.Measure < plan.Duration(100*time.Millisecond) || s.Measure.D() > 10*time.Minute:
		return fieldErr("capacity.measure", "%v: want 100ms..10m", s.Measure)
	case s.Warmup < 0 || s.Warmup.IsAuto() || s.Warmup.D() > time.Minute:
		return fieldErr("capacity.warmup", "%v: want a fixed 0..1m (a step's rate is known, so is its warm-up)", s.Warmup)
	case s.Cooldown < 0 || s.Cooldown.IsAuto() || s.Cooldown.D() > time.Minute:
		return fieldErr("capacity.cooldown", "%v: want 0..1m", s.Cooldown)
	case s.Deadline < s.Measure || s.Deadline.D() > 2*time.Hour:
		return fieldErr("capacity.deadline", "%v: want from one measuring period up to 2h", s.Deadline)
	case s.Rounds < 2 || s.Rounds > maxRounds:
		return fieldErr("capacity.rounds", "%d: want 2..%d (an interval needs two rounds)", s.Rounds, maxRounds)
	case s.Visits < 1 || s.Visits > maxVisits:
		return fieldErr("capacity.visits", "%d: want 1..%d", s.Visits, maxVisits)
	case s.MaxRate < 1 || s.MaxRate > 1e7 || s.Start > s.MaxRate:
		return fieldErr("capacity.max_rate", "%g: want 1..10000000, at least start", s.MaxRate)
	}
	for c, d := range s.Prime {
		if !isClient(c) {
			return fieldErr("capacity.prime", "%q: want a client (%s)", c, strings.Join(plan.Clients, ", "))
		}
		if d < 0 || d.IsAuto() || d.D() > 10*time.Minute {
			return fieldErr("capacity.prime."+c, "%v: want 0..10m", d)
		}
	}
	return nil
}

func isClient(c string) bool {
	for _, x := range plan.Clients {
		if x == c {
			return true
		}
	}
	return false
}

func fieldErr(field, format string, a ...any) error {
	return &plan.FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}
