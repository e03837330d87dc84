package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// capacityRun runs `rpcbed capacity ARGS...` and returns its exit code and output.
func capacityRun(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := run(context.Background(), append([]string{"capacity"}, args...), stdio{strings.NewReader(""), &o, &e})
	return code, o.String(), e.String()
}

// TestCapacityAgreeAndRender: a capacity run agrees with itself (exit 0), is
// rendered again from its capacity.json, and bad arguments are usage errors.
func TestCapacityAgreeAndRender(t *testing.T) {
	fixture := filepath.Join("..", "..", "internal", "capacity", "testdata")
	code, out, errs := capacityRun("agree", fixture, fixture)
	if code != 0 || !strings.Contains(out, "8 of 8 knees inside each other's interval") || !strings.Contains(out, ": met") {
		t.Errorf("agree with itself: exit %d, %q %q; want 0 and 8 of 8, met", code, out, errs)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(fixture, "capacity.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "capacity.json"), b, 0o644)
	if code, _, errs := capacityRun("render", dir); code != 0 {
		t.Fatalf("render: exit %d: %s", code, errs)
	}
	for _, f := range []string{"capacity.md", "capacity.csv", "plots/go-grpc-datalist-200-c50.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("render wrote no %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "capacity.md"))
	want, _ := os.ReadFile(filepath.Join(fixture, "capacity.md"))
	if !bytes.Equal(md, want) {
		t.Error("capacity.md rendered from capacity.json differs from the golden")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"agree", fixture}, 2},
		{[]string{"agree", fixture, t.TempDir()}, 2},
		{[]string{"render"}, 2},
		{[]string{"-spec", filepath.Join(t.TempDir(), "none.yaml")}, 2},
		{[]string{"-bogus"}, 2},
		{[]string{"stray"}, 2},
		{[]string{"-h"}, 0},
	} {
		if code, _, _ := capacityRun(tc.args...); code != tc.code {
			t.Errorf("capacity %q: exit %d; want %d", tc.args, code, tc.code)
		}
	}
}
