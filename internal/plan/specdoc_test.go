package plan

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// specKeys lists every key a spec takes, as dotted paths through nested
// structs (a map's or a list's entries add no segment: hosts.engine,
// overrides.match), from the yaml tags of t.
func specKeys(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath(), "github.com/rpcbed/rpcbed/") {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		key := prefix + name
		out = append(out, key)
		out = append(out, specKeys(f.Type, key+".")...)
	}
	return out
}

// docs/spec.md's key table has a row per spec key: a key added to Spec (or to
// a struct it holds) without its row fails here.
func TestSpecKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Keys\n")
	if !ok {
		t.Fatal("docs/spec.md has no ## Keys section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	var rows []string
	for _, l := range strings.Split(sec, "\n") {
		if k, ok := strings.CutPrefix(l, "| `"); ok {
			k, _, _ = strings.Cut(k, "`")
			rows = append(rows, k)
		}
	}
	keys := specKeys(reflect.TypeOf(Spec{}), "")
	if len(keys) < 40 {
		t.Fatalf("got %d keys from Spec's yaml tags; the walk is wrong", len(keys))
	}
	for _, k := range keys {
		if !slices.Contains(rows, k) {
			t.Errorf("spec key %s has no row in docs/spec.md's key table (| `%s` | ...)", k, k)
		}
	}
	for _, r := range rows {
		if !slices.Contains(keys, r) {
			t.Errorf("docs/spec.md has a row for %s, which no spec takes", r)
		}
	}
}
