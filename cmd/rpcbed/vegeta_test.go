package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVegetaCommand(t *testing.T) {
	csv := "1000000000000,200,500000,0,0,,,,0,GET,http://h/x,\n1000001000000,200,500000,0,0,,,,1,GET,http://h/x,\n"
	file := filepath.Join(t.TempDir(), "v.csv")
	if err := os.WriteFile(file, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		in   string
		code int
		out  string // stdout, or a piece of stderr when code != 0
	}{
		{"stdin", []string{"-rate", "1000"}, csv, 0, "2 0 0.001500 1333.3 500 500 500 500\n"},
		{"file", []string{"-rate", "1000", file}, "", 0, "2 0 0.001500 1333.3 500 500 500 500\n"},
		{"no rate", []string{file}, "", 2, "usage: rpcbed vegeta"},
		{"bad input", []string{"-rate", "1000"}, "a,b\n", 1, "want at least 9"},
		{"missing file", []string{"-rate", "1000", filepath.Join(t.TempDir(), "none")}, "", 1, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"vegeta"}, tc.args...), stdio{strings.NewReader(tc.in), &out, &errb})
			if code != tc.code {
				t.Fatalf("exit %d; want %d (stderr %q)", code, tc.code, errb.String())
			}
			if tc.code == 0 && out.String() != tc.out {
				t.Errorf("got %q; want %q", out.String(), tc.out)
			}
			if tc.code != 0 && !strings.Contains(errb.String(), tc.out) {
				t.Errorf("stderr %q; want it to contain %q", errb.String(), tc.out)
			}
		})
	}
}
