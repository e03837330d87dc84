// Package plan is what a run is asked to do: the spec (matrix.yaml, read and
// checked with errors that name the field), the cells it expands to in a stable
// order, and the hosts and links a multi-host spec names. It runs nothing:
// internal/matrix executes a plan, internal/results records what it measured.
package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The project's one vocabulary, in the order tables and plots list it. The
// clients are the registry's (registry.go): php-pure is php-client with -runtime
// pure, a client of its own, so its cells are named apart
// (php-pure-grpc-datalist-200-c1) in every table, plot and comparison.
var (
	Clients   = clientNames()
	Protocols = []string{"grpc", "thrift", "http", "ice", "dubbo"}
	Calls     = []string{"datatype", "datalist"}
)

// Limits on a spec, so that a mistyped value is refused at once instead of running
// for days or building a plan that exhausts memory (README: Limits).
const (
	// MaxCells bounds the plan before exclusion: clients x protocols x calls x items x
	// concurrency. The full matrix is about 220.
	MaxCells = 5000
	// MaxRuns bounds cells x rounds.
	MaxRuns = 20000
	// MaxDuration bounds each of a cell's duration, warm-up and timeout.
	MaxDuration = time.Hour
)

// Spec is a matrix: what to run and how. It is read from YAML (matrix.yaml); every
// field has a default so a spec names only what it changes.
type Spec struct {
	// Clients maps a client to the protocols it runs, e.g. php: [grpc, thrift, http, ice].
	Clients map[string][]string `yaml:"clients" json:"clients"`
	// Calls: datatype and/or datalist. Items applies to datalist only.
	Calls []string `yaml:"calls" json:"calls"`
	Items []int    `yaml:"items" json:"items"`
	// Concurrency lists the -c levels.
	Concurrency []int `yaml:"concurrency" json:"concurrency"`
	// Load is each cell's run: n and/or duration (whichever ends first), warm-up.
	Load Load `yaml:"load" json:"load"`
	// Overrides change Load for the cells whose name matches a glob, in order; the
	// last match wins field by field.
	Overrides []Override `yaml:"overrides" json:"overrides"`
	// Exclude drops the cells whose name matches any of these globs.
	Exclude []string `yaml:"exclude" json:"exclude"`
	// Rounds is how many rounds the run times (yaml rounds; repeats, its old name,
	// is accepted): a round runs every cell of a server group once, in a random
	// order of its own (Seed; docs/method.md, section 5), so each cell is timed
	// Rounds times. The median and its 95 % interval are reported. run.json keeps
	// the key repeats, so committed runs read as they are.
	Rounds int `yaml:"rounds" json:"repeats"`
	// RoundsOld is the key repeats, rounds' old name: ParseSpec moves it to Rounds.
	RoundsOld int `yaml:"repeats,omitempty" json:"-"`
	// roundsKey is the key the spec gave Rounds by (rounds or repeats): errors
	// name it.
	roundsKey string
	// Seed orders the rounds: two runs with one seed run their rounds in the same
	// order. 0 (none given): the run picks one and records it in run.json.
	Seed int64 `yaml:"seed,omitempty" json:"seed,omitempty"`
	// Precision and Budget: after its rounds, a server group gets more rounds for
	// the cells whose in-run 95 % interval (req/s or either side's CPU per call) is
	// wider than ±Precision, the widest first, while the run's Budget (counted
	// from its start, the later groups' rounds reserved) allows them. 0: none.
	Precision Fraction `yaml:"precision,omitempty" json:"precision,omitempty"`
	Budget    Duration `yaml:"budget,omitempty" json:"budget,omitzero"`
	// Forks is how many times a group whose server runs on a JVM (java) starts
	// its server, as JMH forks: a JVM's steady state differs from one start to
	// the next (its JIT compiles differently), by more than its rounds vary
	// within one start, and only a second start in the run can see it. The
	// group's rounds split evenly over its forks (RoundsFor), each fork a fresh
	// server and fresh client workers, primed again; the intervals add the
	// measured spread between forks (docs/method.md, section 11). 0 or 1: one
	// start.
	Forks int `yaml:"forks,omitempty" json:"forks,omitempty"`
	// Servers maps a protocol to the server that serves it: go (go-server) or java
	// (the Java baseline). Default: go for grpc/thrift/http, java for ice/dubbo.
	Servers map[string]string `yaml:"servers" json:"servers"`
	// ClientResources and ServerResources are what each side gets (yaml: client,
	// server).
	ClientResources Resources `yaml:"client" json:"client"`
	ServerResources Resources `yaml:"server" json:"server"`
	// Store is go-server's record store: memory, redis (redis_addr) or aerospike
	// (aerospike_hosts, seeds host:port[,host:port]; namespace "test").
	Store          string `yaml:"store" json:"store"`
	RedisAddr      string `yaml:"redis_addr" json:"redis_addr"`
	AerospikeHosts string `yaml:"aerospike_hosts" json:"aerospike_hosts"`
	// Auth turns token checking on in the servers (the published shape; default true).
	Auth *bool `yaml:"auth" json:"auth"`
	// Verify runs one tiny call per client x protocol x call before any timing.
	Verify *bool `yaml:"verify" json:"verify"`
	// Worker runs each client as a long-lived worker (one per client x protocol x
	// server group; docs/report-format.md, "Worker mode"); false runs one process
	// per run. Default true; a client whose build has no worker mode falls back to
	// one process per run by itself.
	Worker *bool `yaml:"worker" json:"worker"`
	// Prime is, per client, how long each un-recorded run lasts that goes through
	// its workers after verify and before the first timed repeat: one per call and
	// item count of the worker's cells, at the largest concurrency of its cells
	// (java: 2s, so the first repeats do not measure the JIT at work on the one
	// core it shares with the load), and over TLS one per security too. Output:
	// raw/prime-<pair>[-<items>][@<security>][-f<fork>][-r<round>].txt.
	// Worker mode only.
	Prime map[string]Duration `yaml:"prime,omitempty" json:"prime,omitempty"`
	// PrimeMax is, per primed client, how long its priming may go on per worker:
	// rounds of prime runs repeat until the client's and a JVM server's JIT are at
	// rest (compile time at most 5 % of a round) or this is spent. None: one round.
	// A client-protocol key (java-grpc) sets one worker's budget apart from its
	// client's (PrimeBudget).
	PrimeMax map[string]Duration `yaml:"prime_max,omitempty" json:"prime_max,omitempty"`
	// Hosts places each role (go-server, java-server and each client) on a host:
	// its Docker engine and the address peers reach it at (docs/scale.md). None:
	// everything runs on the one engine (or locally) over 127.0.0.1.
	Hosts map[string]Host `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	// Link, or Links for a link dimension, is the link between the hosts: loopback,
	// unshaped, or shaped ({rate: 100mbit}; delay/jitter/loss need netem). With a
	// link dimension every cell name carries its link (go-http-datalist-5000-c8@100mbit).
	Link  *Link  `yaml:"link,omitempty" json:"link,omitempty"`
	Links []Link `yaml:"links,omitempty" json:"links,omitempty"`
	// Security and Connect are the cells' security conditions (plaintext, tls,
	// mtls with variants: security.go) and connection modes (persistent,
	// per-call). None given: plaintext and persistent, named as before.
	Security []string `yaml:"security,omitempty" json:"security,omitempty"`
	Connect  []string `yaml:"connect,omitempty" json:"connect,omitempty"`
	// Cluster runs the cells on a cluster engine (Docker Swarm): the server on a
	// node of its pool, each cell's load split over client nodes (docs/scale.md).
	Cluster *Cluster `yaml:"cluster,omitempty" json:"cluster,omitempty"`
}

// Load is how long one timed run of a cell lasts.
type Load struct {
	N        int64    `yaml:"n" json:"n"`
	Duration Duration `yaml:"duration" json:"duration"`
	// Warmup is a fixed duration or auto: until throughput settles (3 windows of
	// 250 ms within 5 %), at most WarmupMax (docs/method.md, section 5).
	Warmup    Duration `yaml:"warmup" json:"warmup"`
	WarmupMax Duration `yaml:"warmup_max" json:"warmup_max,omitzero"`
	// RepeatWarmup is the warm-up of every repeat after a cell's first when the
	// client runs as a long-lived worker that timed the cell's earlier repeat (its
	// JIT, caches and pools are warm): a fixed duration or auto. 0: Warmup.
	RepeatWarmup Duration `yaml:"repeat_warmup" json:"repeat_warmup,omitzero"`
	// Conns is -conns: the TCP connections the client opens; 0 = one per worker (c).
	Conns int `yaml:"conns" json:"conns,omitzero"`
	// Timeout bounds one client run; 0 = warm-up + duration + 60 s (or 120 s for n only).
	Timeout Duration `yaml:"timeout" json:"timeout"`
}

// Auto is the warm-up value "auto": until the figures settle.
const Auto Duration = -1

// IsAuto reports whether d is the warm-up value auto.
func (d Duration) IsAuto() bool { return d == Auto }

// DefaultWarmupMax bounds an auto warm-up when the spec gives no warmup_max (the
// clients' own default).
const DefaultWarmupMax = Duration(10 * time.Second)

// WarmupBound is the longest the warm-up may take: the fixed warm-up, or
// WarmupMax for auto.
func (l Load) WarmupBound() time.Duration {
	if l.Warmup.IsAuto() {
		if l.WarmupMax > 0 {
			return l.WarmupMax.D()
		}
		return DefaultWarmupMax.D()
	}
	return l.Warmup.D()
}

// ForRepeat is the load of repeat r (1-based) when warm says the client that
// runs it timed this cell's previous repeat and is still the same process: from
// the second repeat on, RepeatWarmup (when set) replaces Warmup.
func (l Load) ForRepeat(r int, warm bool) Load {
	if r > 1 && warm && l.RepeatWarmup != 0 {
		l.Warmup = l.RepeatWarmup
	}
	return l
}

// ConnsFor is the connection count a cell of concurrency c runs with.
func (l Load) ConnsFor(c int) int {
	if l.Conns > 0 {
		return l.Conns
	}
	return c
}

// Override changes Load for the cells matching Match (path.Match glob on the cell
// name, e.g. "php-*-c50" or "*-5000-*").
type Override struct {
	Match    string    `yaml:"match" json:"match"`
	N        *int64    `yaml:"n" json:"n"`
	Duration *Duration `yaml:"duration" json:"duration"`
	Warmup   *Duration `yaml:"warmup" json:"warmup"`
	// WarmupMax, RepeatWarmup and Conns as in Load.
	WarmupMax    *Duration `yaml:"warmup_max" json:"warmup_max,omitempty"`
	RepeatWarmup *Duration `yaml:"repeat_warmup" json:"repeat_warmup,omitempty"`
	Conns        *int      `yaml:"conns" json:"conns,omitempty"`
	Timeout      *Duration `yaml:"timeout" json:"timeout"`
}

// Resources are what a client or server process is given, as docker run's
// --cpuset-cpus, --cpus and --memory. The Local runner honours CPUSet (taskset)
// only.
type Resources struct {
	CPUSet   string  `yaml:"cpuset" json:"cpuset"`
	CPUs     float64 `yaml:"cpus" json:"cpus"`
	MemoryMB int     `yaml:"memory_mb" json:"memory_mb"`
}

// MaxForks bounds Spec.Forks.
const MaxForks = 4

// ForksFor is how many server starts c's group makes: Spec.Forks for a group
// whose server is a JVM, 1 otherwise.
func (s Spec) ForksFor(c Cell) int {
	if srv, _ := ServerOf(c.ServerLang); s.Forks > 1 && srv.JVM {
		return s.Forks
	}
	return 1
}

// RoundsFor is how many rounds c is timed in before Precision adds any:
// Repeats, or for a forked group at least 2 rounds per fork (the spread
// within a fork needs two), Repeats split evenly over them and rounded up.
func (s Spec) RoundsFor(c Cell) int {
	f := s.ForksFor(c)
	if f == 1 {
		return s.Rounds
	}
	return f * max(2, (s.Rounds+f-1)/f)
}

// ForkOf is the fork (1-based) round r of c's group runs in: the rounds split
// evenly (RoundsFor), the rounds Precision adds go to the last fork. 0: the
// group does not fork.
func (s Spec) ForkOf(c Cell, r int) int {
	f := s.ForksFor(c)
	if f == 1 {
		return 0
	}
	per := s.RoundsFor(c) / f
	return min(f, (r-1)/per+1)
}

// Fraction reads a share as a percentage ("5%") or a fraction (0.05).
type Fraction float64

func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return &durationError{line: n.Line, value: s, why: "want a share like 5% or 0.05"}
	}
	if pct {
		v /= 100
	}
	if v < 0 || v >= 1 {
		return &durationError{line: n.Line, value: s, why: "want a share from 0 to below 100 %"}
	}
	*f = Fraction(v)
	return nil
}

func (f Fraction) MarshalYAML() (any, error) { return f.String(), nil }

// String is the share as a percentage ("5%").
func (f Fraction) String() string { return strconv.FormatFloat(float64(f)*100, 'f', -1, 64) + "%" }

// Duration reads Go durations ("2s", "500ms") or plain seconds ("2", 1.5).
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if s == "auto" {
		*d = Auto // only warmup takes it: Load.validate refuses it elsewhere
		return nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		// NaN, Inf and values past int64 nanoseconds have no duration.
		if math.IsNaN(f) || math.Abs(f) > MaxDuration.Seconds() {
			return &durationError{line: n.Line, value: s, why: fmt.Sprintf("want at most %v", MaxDuration)}
		}
		*d = Duration(f * float64(time.Second))
	} else if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
	} else {
		return &durationError{line: n.Line, value: s, why: "want a duration like 2s or seconds"}
	}
	if *d < 0 {
		return &durationError{line: n.Line, value: s, why: "must not be negative"}
	}
	return nil
}

// durationError is a bad duration value; ParseSpec names its key from the line.
type durationError struct {
	line       int
	value, why string
}

func (e *durationError) Error() string { return fmt.Sprintf("line %d: %q: %s", e.line, e.value, e.why) }

func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// String is the Go duration, or auto.
func (d Duration) String() string {
	if d.IsAuto() {
		return "auto"
	}
	return time.Duration(d).String()
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	if len(n.Content) == 0 {
		return nil
	}
	return d.UnmarshalYAML(n.Content[0])
}

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// FieldError is a spec mistake: Field names it in the spec's own words.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return "spec: " + e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, a...)}
}

// ReadSpec reads and validates a YAML spec file.
func ReadSpec(file string) (Spec, error) {
	b, err := readSpecFile(file)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return Spec{}, err // the error names the file
	}
	s := Spec{}
	if err == nil {
		s, err = ParseSpec(b)
	}
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return s, nil
}

// ParseSpec reads a YAML spec, fills the defaults and validates it. Unknown keys
// are errors: a misspelt key would otherwise silently change nothing. A spec over
// MaxSpecBytes, or with a list over its limit (specLists), is refused before it
// is decoded.
func ParseSpec(b []byte) (Spec, error) {
	if len(b) > MaxSpecBytes {
		return Spec{}, sizeError(bytes.NewReader(b))
	}
	var s Spec
	given, err := givenKeys(b)
	if err != nil {
		return Spec{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	// An unknown key or a value of the wrong type (a *yaml.TypeError) leaves the
	// rest decoded: the spec's other mistakes are reported with it.
	var p problems
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		var de *durationError
		var te *yaml.TypeError
		switch {
		case errors.As(err, &de):
			return Spec{}, fieldErr(keyBefore(b, de.line, de.value), "%v", de)
		case errors.As(err, &te):
			p.addAll(specYAMLError(err))
		default:
			return Spec{}, specYAMLError(err)
		}
	}
	s.roundsKey = "rounds"
	if given["repeats"] {
		if given["rounds"] {
			p.addf("repeats", "the old name of rounds: give rounds alone")
		} else {
			s.Rounds, s.roundsKey = s.RoundsOld, "repeats"
		}
	}
	s.RoundsOld = 0
	if given[s.roundsKey] && s.Rounds == 0 {
		p.addf(s.roundsKey, "0: want 1..100 (leave the key out for the default, 3)")
	}
	s.defaults()
	p.addAll(s.Validate())
	if err := p.err(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// givenKeys returns the top-level keys of a spec. An empty document and a key
// without a value are refused: both would silently run the default matrix (or a
// default part of it) instead of what the author meant.
func givenKeys(b []byte) (map[string]bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		if se := yamlSyntaxError(b, err); se != nil {
			return nil, se
		}
		return nil, specYAMLError(err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return nil, errors.New("spec: empty document: name at least clients (matrix.yaml is the default spec)")
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("spec: line %d: want a mapping of keys such as clients, items, load", m.Line)
	}
	if err := checkSpecLists(&doc); err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			return nil, fieldErr(k.Value, "line %d: no value (leave the key out for its default)", k.Line)
		}
		keys[k.Value] = true
	}
	return keys, nil
}

// specYAMLError names the field yaml.v3 complained about ("field foo not found in
// type plan.Spec" -> field foo), every one of them when it found several.
func specYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 1 {
		var p problems
		for _, m := range te.Errors {
			p.add(specYAMLError(errors.New(m)))
		}
		return p.err()
	}
	msg := err.Error()
	if i := strings.Index(msg, "field "); i >= 0 {
		rest := msg[i+len("field "):]
		if j := strings.Index(rest, " not found"); j >= 0 {
			return fieldErr(rest[:j], "unknown key (%s)", strings.TrimPrefix(msg, "yaml: "))
		}
	}
	return fmt.Errorf("spec: %w", err)
}

// keyBefore finds the key whose value is v on 1-based line of src ("duration" in
// "load: {duration: soon}").
func keyBefore(src []byte, line int, v string) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return "?"
	}
	l := lines[line-1]
	i := strings.Index(l, v)
	if i < 0 {
		i = len(l)
	}
	head := strings.TrimRight(l[:i], " \t'\"")
	head = strings.TrimSuffix(head, ":")
	j := strings.LastIndexAny(head, " \t{,-")
	return head[j+1:]
}

func (s *Spec) defaults() {
	if s.Clients == nil {
		s.Clients = map[string][]string{}
		for _, c := range Clients {
			cl, _ := ClientOf(c)
			s.Clients[c] = slices.Clone(cl.Protocols)
		}
	}
	if len(s.Calls) == 0 {
		s.Calls = []string{"datalist"}
	}
	if len(s.Items) == 0 && slices.Contains(s.Calls, "datalist") {
		s.Items = []int{200}
	}
	if len(s.Concurrency) == 0 {
		s.Concurrency = []int{1}
	}
	if s.Load.N == 0 && s.Load.Duration == 0 {
		s.Load.Duration = Duration(2 * time.Second)
	}
	if s.Rounds == 0 {
		s.Rounds = 3
	}
	srv := map[string]string{}
	for _, p := range Protocols {
		srv[p] = defaultServer(p)
	}
	for p, v := range s.Servers {
		srv[p] = v
	}
	s.Servers = srv
	if s.ClientResources == (Resources{}) {
		s.ClientResources = Resources{CPUSet: "1"}
	}
	if s.ServerResources == (Resources{}) {
		s.ServerResources = Resources{CPUSet: "0"}
	}
	if s.Store == "" {
		s.Store = "memory"
	}
	if s.RedisAddr == "" {
		s.RedisAddr = "127.0.0.1:6379"
	}
	if s.AerospikeHosts == "" {
		s.AerospikeHosts = "127.0.0.1:3000"
	}
	if s.Auth == nil {
		t := true
		s.Auth = &t
	}
	if s.Verify == nil {
		t := true
		s.Verify = &t
	}
	if s.Worker == nil {
		t := true
		s.Worker = &t
	}
}

// Validate reports every mistake of the spec at once, each naming its field (an
// *Errors of *FieldError). The fields that can be checked alone are checked
// first, all of them; the checks that need the spec's cells (the cluster, the
// hosts, every cell's load) run once those are right, so a wrong client or
// server is reported as itself, not also as the cells it left out.
func (s *Spec) Validate() error {
	var p problems
	s.validateVocabulary(&p)
	p.add(s.Load.validate("load")...)
	s.validatePrime(&p)
	s.validateGlobs(&p)
	p.add(s.validateConditions())
	s.validateServers(&p)
	s.validateRounds(&p)
	s.validateResources(&p)
	if len(p) > 0 {
		return p.err()
	}
	// Before the plan is built: a spec listing 100 000 item counts x 10 000
	// concurrencies is refused, not planned.
	if n := s.maxCells(); n > MaxCells {
		p.addf("clients", "%d cells (clients x protocols x calls x items x concurrency, before exclude); want at most %d", n, MaxCells)
		return p.err()
	}
	p.add(s.validateCluster())
	p.add(s.validateHosts())
	s.validateCells(&p)
	return p.err()
}

// problems collects a spec's mistakes in the order they are found.
type problems []error

func (p *problems) add(errs ...error) {
	for _, err := range errs {
		if err != nil {
			*p = append(*p, err)
		}
	}
}

func (p *problems) addf(field, format string, a ...any) { p.add(fieldErr(field, format, a...)) }

// addAll adds err, or each mistake of an *Errors.
func (p *problems) addAll(err error) {
	var e *Errors
	if errors.As(err, &e) {
		p.add(e.Errs...)
		return
	}
	p.add(err)
}

// err is nil for none, the one mistake alone, or *Errors for several.
func (p problems) err() error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return p[0]
	}
	return &Errors{Errs: p}
}

// Errors is several mistakes of one spec, each its own line naming its field.
type Errors struct{ Errs []error }

func (e *Errors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "spec: %d mistakes:", len(e.Errs))
	for _, err := range e.Errs {
		b.WriteString("\n  " + strings.TrimPrefix(err.Error(), "spec: "))
	}
	return b.String()
}

// Unwrap gives every mistake (errors.As finds the first *FieldError).
func (e *Errors) Unwrap() []error { return e.Errs }

// validateVocabulary checks clients, calls, items and concurrency against the
// registry and their ranges.
func (s *Spec) validateVocabulary(p *problems) {
	if len(s.Clients) == 0 {
		p.addf("clients", "no client")
	}
	for _, c := range slices.Sorted(maps.Keys(s.Clients)) {
		cl, ok := ClientOf(c)
		if !ok {
			p.addf("clients", "unknown client %q: want %s", c, orList(Clients))
			continue
		}
		if len(s.Clients[c]) == 0 {
			p.addf("clients."+c, "no protocol")
		}
		for _, proto := range s.Clients[c] {
			if !slices.Contains(cl.Protocols, proto) {
				p.addf("clients."+c, "%s-client does not speak %q (it speaks %s)", c, proto, strings.Join(cl.Protocols, ", "))
			}
		}
	}
	for _, c := range s.Calls {
		if !slices.Contains(Calls, c) {
			p.addf("calls", "unknown call %q: want datatype or datalist", c)
		}
	}
	for _, n := range s.Items {
		if n < 0 || n > 100000 {
			p.addf("items", "%d: want 0..100000", n)
		}
	}
	for _, c := range s.Concurrency {
		if c < 1 || c > 10000 {
			p.addf("concurrency", "%d: want 1..10000", c)
		}
	}
}

// orList is "a, b, c or d".
func orList(v []string) string {
	if len(v) < 2 {
		return strings.Join(v, "")
	}
	return strings.Join(v[:len(v)-1], ", ") + " or " + v[len(v)-1]
}

// validatePrime checks prime and prime_max against the spec's clients.
func (s *Spec) validatePrime(p *problems) {
	for _, c := range slices.Sorted(maps.Keys(s.Prime)) {
		if _, ok := s.Clients[c]; !ok {
			p.addf("prime."+c, "not a client of this spec")
		}
		if d := s.Prime[c]; d <= 0 || d.D() > MaxDuration {
			p.addf("prime."+c, "%v: want a duration above 0 and at most %v", d.D(), MaxDuration)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.PrimeMax)) {
		c := k
		if _, ok := s.Clients[k]; !ok {
			// A worker key, client-protocol: the client's, of a protocol it runs.
			for client, protos := range s.Clients {
				for _, proto := range protos {
					if k == client+"-"+proto {
						c = client
					}
				}
			}
			if c == k {
				p.addf("prime_max."+k, "neither a client nor a client-protocol worker of this spec")
				continue
			}
		}
		pr, ok := s.Prime[c]
		if !ok {
			p.addf("prime_max."+k, "%s is not primed (prime.%s)", c, c)
			continue
		}
		if d := s.PrimeMax[k]; d < pr || d.D() > MaxDuration {
			p.addf("prime_max."+k, "%v: want at least prime.%s (%v) and at most %v", d.D(), c, pr.D(), MaxDuration)
		}
	}
}

// validateGlobs checks the overrides' and exclude's cell-name globs.
func (s *Spec) validateGlobs(p *problems) {
	for i, o := range s.Overrides {
		if _, err := path.Match(o.Match, ""); err != nil || o.Match == "" {
			p.addf(fmt.Sprintf("overrides[%d].match", i), "%q: want a glob on cell names such as php-*-c50", o.Match)
		}
	}
	for i, g := range s.Exclude {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			p.addf(fmt.Sprintf("exclude[%d]", i), "%q: want a glob on cell names such as php-*-c800", g)
		}
	}
}

// validateServers checks that every protocol's server can serve it: a cell
// whose protocol has none would be left out of the plan silently.
func (s *Spec) validateServers(p *problems) {
	for _, proto := range slices.Sorted(maps.Keys(s.Servers)) {
		v := s.Servers[proto]
		if !slices.Contains(Protocols, proto) {
			p.addf("servers", "unknown protocol %q", proto)
			continue
		}
		if srv, _ := ServerOf(v); !slices.Contains(srv.Protocols, proto) {
			p.addf("servers."+proto, "%q cannot serve %s (%s)", v, proto, servesList())
		}
	}
}

// servesList is "go serves grpc, thrift, http; java serves grpc, ...".
func servesList() string {
	var parts []string
	for _, srv := range ServerKinds {
		parts = append(parts, srv.Name+" serves "+strings.Join(srv.Protocols, ", "))
	}
	return strings.Join(parts, "; ")
}

// roundsField is the key errors about Rounds name: the one the spec gave.
func (s *Spec) roundsField() string {
	if s.roundsKey == "" {
		return "rounds"
	}
	return s.roundsKey
}

// validateRounds checks rounds, forks, precision and budget.
func (s *Spec) validateRounds(p *problems) {
	if s.Budget.IsAuto() || s.Budget.D() > MaxDuration*24 {
		p.addf("budget", "%v: want a duration up to %v", s.Budget, MaxDuration*24)
	}
	if s.Precision > 0 && s.Budget == 0 {
		p.addf("precision", "%v without a budget: give budget (e.g. 10m) to bound the rounds it adds", s.Precision)
	}
	if s.Rounds < 1 || s.Rounds > 100 {
		p.addf(s.roundsField(), "%d: want 1..100", s.Rounds)
	}
	if s.Forks < 0 || s.Forks > MaxForks {
		p.addf("forks", "%d: want 0..%d", s.Forks, MaxForks)
	}
	if s.Forks > 1 && s.Cluster != nil {
		p.addf("forks", "%d with a cluster: a cluster run starts its services once", s.Forks)
	}
}

// validateResources checks the client and server resources and the store.
func (s *Spec) validateResources(p *problems) {
	for _, side := range []string{"client", "server"} {
		r := s.ClientResources
		if side == "server" {
			r = s.ServerResources
		}
		if r.CPUs < 0 || r.MemoryMB < 0 {
			p.addf(side, "cpus and memory_mb must not be negative")
		}
		if r.CPUSet != "" && strings.Trim(r.CPUSet, "0123456789,-") != "" {
			p.addf(side+".cpuset", "%q: want a CPU list such as 0 or 0-1", r.CPUSet)
		}
	}
	switch s.Store {
	case "memory", "redis":
	case "aerospike":
		for _, h := range strings.Split(s.AerospikeHosts, ",") {
			host, port, err := net.SplitHostPort(strings.TrimSpace(h))
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
				p.addf("aerospike_hosts", "%q: want host:port[,host:port]", s.AerospikeHosts)
				break
			}
		}
	default:
		p.addf("store", "%q: want memory, redis or aerospike", s.Store)
	}
}

// validateCells checks the plan: it has a cell, its runs are bounded, and every
// cell's load fits its concurrency and client. A mistake many cells share is
// reported once, for the first of them, with how many more share it.
func (s *Spec) validateCells(p *problems) {
	plan := s.Plan()
	if len(plan) == 0 {
		p.addf("clients", "the spec has no cell")
		return
	}
	runs := 0
	for _, c := range plan {
		runs += s.RoundsFor(c)
	}
	if runs > MaxRuns {
		p.addf(s.roundsField(), "%d cells x %d rounds = %d runs; want at most %d", len(plan), s.Rounds, runs, MaxRuns)
	}
	var first []error
	more := map[string]int{}
	once := func(err error) {
		var fe *FieldError
		if err == nil || !errors.As(err, &fe) {
			return
		}
		kind := fe.Field + ": " + cellKind(fe.Err.Error())
		if more[kind]++; more[kind] == 1 {
			first = append(first, err)
		}
	}
	for _, c := range plan {
		if errs := c.Load.validate("load (cell " + c.Name() + ")"); len(errs) > 0 {
			once(errs[0])
		}
		once(validateCellConditions(c))
		if k := c.Load.Conns; k > c.Concurrency {
			once(fieldErr("conns", "cell %s: conns %d is above its concurrency %d (want 1..c)", c.Name(), k, c.Concurrency))
		} else if k > 0 && k != c.Concurrency && oneCallPerConn(c) {
			once(fieldErr("conns", "cell %s: conns %d != c %d: %s carries one call per connection (docs/method.md, section 4)", c.Name(), k, c.Concurrency, c.Client+" over "+c.Protocol))
		}
		if c.Load.N > 0 && c.Load.N < int64(c.Concurrency) {
			once(fieldErr("load.n", "cell %s: n %d is below its concurrency %d", c.Name(), c.Load.N, c.Concurrency))
		}
	}
	for _, err := range first {
		var fe *FieldError
		errors.As(err, &fe)
		if n := more[fe.Field+": "+cellKind(fe.Err.Error())] - 1; n > 0 {
			err = &FieldError{Field: fe.Field, Err: fmt.Errorf("%w (and %d more cells alike)", fe.Err, n)}
		}
		p.add(err)
	}
}

// cellKind is a per-cell message without its cell and numbers, so that cells
// failing one check alike count as one mistake.
func cellKind(msg string) string {
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "cell ") {
		msg = rest
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, msg)
}

// validate checks a load; field is where it was given (load, or a cell's).
func (l Load) validate(field string) []error {
	var p problems
	if l.N < 0 {
		p.addf(field+".n", "%d: must not be negative", l.N)
	}
	if l.N == 0 && l.Duration == 0 {
		p.addf(field, "give n or duration (or both: whichever ends first)")
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"duration", l.Duration}, {"warmup", l.Warmup}, {"warmup_max", l.WarmupMax}, {"repeat_warmup", l.RepeatWarmup}, {"timeout", l.Timeout}} {
		if d.v.D() > MaxDuration {
			p.addf(field+"."+d.name, "%v: want at most %v", d.v.D(), MaxDuration)
		}
	}
	if l.Duration.IsAuto() || l.Timeout.IsAuto() || l.WarmupMax.IsAuto() {
		p.addf(field, "only warmup takes auto")
	}
	if l.Conns < 0 {
		p.addf(field+".conns", "%d: must not be negative", l.Conns)
	}
	return p
}

// maxCells is the plan's size before exclusion, computed without building it (a
// spec listing 100 000 item counts x 10 000 concurrencies must be refused, not
// planned). It saturates instead of overflowing.
func (s *Spec) maxCells() int {
	mul := func(a, b int) int {
		if a != 0 && b > math.MaxInt/a {
			return math.MaxInt
		}
		return a * b
	}
	perPair := 0
	for _, c := range s.Calls {
		switch c {
		case "datalist":
			perPair += mul(len(s.Items), len(s.Concurrency))
		default:
			perPair += len(s.Concurrency)
		}
	}
	pairs := 0
	for _, ps := range s.Clients {
		pairs += len(ps)
	}
	return mul(mul(mul(pairs, perPair), max(1, len(s.LinkList()))), len(s.SecurityList())*len(s.ConnectList()))
}

// MarshalSpec is s as YAML, the form saved beside a run so Resume reruns exactly it.
func MarshalSpec(s Spec) ([]byte, error) { return yaml.Marshal(s) }

// PrimeBudget is how long a worker's priming may go on: prime_max's key for the
// worker (java-grpc), else its client's (java); 0 for one round.
func (s Spec) PrimeBudget(client, protocol string) time.Duration {
	if d, ok := s.PrimeMax[client+"-"+protocol]; ok {
		return d.D()
	}
	return s.PrimeMax[client].D()
}
