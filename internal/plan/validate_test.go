package plan

import (
	"errors"
	"strings"
	"testing"
)

// fieldsOf lists the fields an error names, in order: every *FieldError of an
// *Errors, or the one.
func fieldsOf(err error) []string {
	var errs []error
	var e *Errors
	if errors.As(err, &e) {
		errs = e.Errs
	} else if err != nil {
		errs = []error{err}
	}
	var out []string
	for _, err := range errs {
		var fe *FieldError
		if errors.As(err, &fe) {
			out = append(out, fe.Field)
		} else {
			out = append(out, "?"+err.Error())
		}
	}
	return out
}

// A spec with several mistakes names every one of them at once, each by its
// field, in the order Validate checks them.
func TestParseSpecReportsEveryMistake(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		fields     []string
	}{
		{"two bad fields", "items: [-1]\nstore: cassandra", []string{"items", "store"}},
		{"four bad fields", "clients: {go: [ice]}\ncalls: [datablob]\nconcurrency: [0]\nrepeats: 101",
			[]string{"clients.go", "calls", "concurrency", "repeats"}},
		{"every bad entry of a list", "items: [-1, 200, 100001]", []string{"items", "items"}},
		{"unknown keys and a bad value", "clientz: 1\nloadz: 2\nitems: [-1]", []string{"clientz", "loadz", "items"}},
		{"a load's fields", "load: {n: -5, timeout: 2h}", []string{"load.n", "load.timeout"}},
		{"resources and store", "client: {cpuset: one}\nserver: {cpus: -1}\nstore: cassandra", []string{"client.cpuset", "server", "store"}},
		{"globs", "exclude: ['[', 'x', '[']\noverrides: [{match: '', n: 5}]", []string{"overrides[0].match", "exclude[0]", "exclude[2]"}},
		// A wrong client is reported as itself, not as the cells it leaves out.
		{"no cascade to the plan", "clients: {ruby: [grpc]}\nitems: [-1]", []string{"clients", "items"}},
		// Many cells failing one check alike are one mistake, with their count.
		{"cells alike once", "load: {n: 10}\nconcurrency: [50, 60]\nitems: [2, 20]\nclients: {go: [grpc]}", []string{"load.n"}},
		{"cells of two checks", "load: {n: 10, conns: 40}\nconcurrency: [20]\nclients: {go: [grpc]}", []string{"conns", "load.n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			got := fieldsOf(err)
			if strings.Join(got, " ") != strings.Join(tc.fields, " ") {
				t.Errorf("got fields %q; want %q\n%v", got, tc.fields, err)
			}
		})
	}
}

func TestSpecErrorsPrintOneLineEach(t *testing.T) {
	_, err := ParseSpec([]byte("items: [-1]\nstore: x"))
	want := `spec: 2 mistakes:
  items: -1: want 0..100000
  store: "x": want memory, redis or aerospike`
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	_, err = ParseSpec([]byte("store: x"))
	if err == nil || err.Error() != `spec: store: "x": want memory, redis or aerospike` {
		t.Errorf("one mistake: got %v; want it alone, as before", err)
	}
}

func TestSpecCellMistakesCounted(t *testing.T) {
	_, err := ParseSpec([]byte("load: {n: 10}\nconcurrency: [50, 60]\nitems: [2, 20]\nclients: {go: [grpc]}"))
	want := "spec: load.n: cell go-grpc-datalist-2-c50: n 10 is below its concurrency 50 (and 3 more cells alike)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v; want %s", err, want)
	}
}

// A YAML syntax error names the line it is on and the key there.
func TestParseSpecYAMLErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"unclosed bracket on line 2", "clients: {go: [grpc]}\nitems: [2, 200\n", `spec: items: line 2: "[" is never closed`},
		{"unclosed bracket before a closed one", "clients: {go: [grpc]}\nitems: [2, 200\nconcurrency: [1]\n", `spec: items: line 2: "[" is never closed`},
		{"unclosed brace on line 3", "items: [2]\ncalls: [datalist]\nload: {n: 5\n", `spec: load: line 3: "{" is never closed`},
		{"wrong closer", "items: [2]\nload: {n: 5}\nclients: {go: [grpc}\n", `spec: go: line 3: "}" where the "[" of line 3 wants "]"`},
		{"stray closer", "items: [2]\ncalls: [datalist]]\n", `spec: calls: line 2: "]" closes nothing`},
		{"brackets in quotes and comments", "exclude: ['[x']  # [\nitems: [2, 200\n", `spec: items: line 2: "[" is never closed`},
		{"unclosed on line 1", "items: [2, 200\n", `spec: items: line 1: "[" is never closed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v; want it to start %q", err, tc.want)
			}
		})
	}
}

// rounds is the key; repeats, its old name, is accepted alone, and errors name
// the key the spec gave.
func TestSpecRoundsAndItsOldName(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		rounds     int
		field      string
	}{
		{"rounds", "rounds: 5", 5, ""},
		{"repeats, the old name", "repeats: 4", 4, ""},
		{"neither", "items: [2]", 3, ""},
		{"both", "rounds: 2\nrepeats: 2", 0, "repeats"},
		{"rounds 0", "rounds: 0", 0, "rounds"},
		{"rounds too many", "rounds: 101", 0, "rounds"},
		{"repeats too many", "repeats: 101", 0, "repeats"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSpec([]byte(tc.spec))
			if got := strings.Join(fieldsOf(err), " "); got != tc.field {
				t.Fatalf("got fields %q (%v); want %q", got, err, tc.field)
			}
			if err == nil && s.Rounds != tc.rounds {
				t.Errorf("got %d rounds; want %d", s.Rounds, tc.rounds)
			}
		})
	}
	s, err := ParseSpec([]byte("repeats: 4"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := MarshalSpec(s)
	if err != nil || !strings.Contains(string(b), "\nrounds: 4\n") || strings.Contains(string(b), "repeats") {
		t.Errorf("saved spec: got %s (%v); want rounds: 4 and no repeats", b, err)
	}
}
