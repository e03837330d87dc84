package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// trackerRef is a reference to this project's own tracker by number (the word
// issue, then a number, with or without #), which means nothing to a reader of
// the repository. Another project's names its repository first
// (zeroc-ice/ice's, in php-client's README).
var (
	trackerRef  = regexp.MustCompile(`(?i)\bissues?\s+#?[0-9]+`)
	otherRepoAt = regexp.MustCompile(`[\w.-]+/[\w.-]+\s*$`)
)

// No file of the repository names an issue of the project's tracker: a reason
// is written out where it is needed, and history is in git and docs/notes.
func TestNoIssueNumbers(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	checked := 0
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil || len(b) > 4<<20 || bytes.IndexByte(b, 0) >= 0 {
			continue // gone from the work tree, large data or binary
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range trackerRef.FindAllStringIndex(line, -1) {
				if otherRepoAt.MatchString(line[:m[0]]) {
					continue
				}
				t.Errorf("%s:%d: %q names an issue by number: say what it is about instead", f, i+1, line[m[0]:m[1]])
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d files; git ls-files is not read right", checked)
	}
}

// docs/layout.md names every doc: each docs/*.md by its name on the docs/ line,
// and docs/notes/ (the dated measurements) when it exists.
func TestLayoutListsEveryDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	sec := string(b)
	var line string
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "docs/") {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatal("docs/layout.md has no docs/ line")
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == ':' }) {
		words[strings.TrimSuffix(w, ".md")] = true
	}
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) < 10 {
		t.Fatalf("docs/*.md: %d files, %v", len(docs), err)
	}
	for _, d := range docs {
		if name := strings.TrimSuffix(filepath.Base(d), ".md"); !words[name] {
			t.Errorf("docs/%s.md is not on docs/layout.md's docs/ line: %s", name, line)
		}
	}
	if _, err := os.Stat("../../docs/notes"); err == nil && !words["notes/"] {
		t.Errorf("docs/notes/ is not on docs/layout.md's docs/ line: %s", line)
	}
}

// A reference says what is true now: a section headed by a date is a dated
// measurement, and belongs in docs/notes/DATE-topic.md, which the reference links.
func TestNoDatedSectionsOutsideNotes(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.md").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	date := regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(f, "docs/notes/") || strings.HasPrefix(f, "results/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			continue
		}
		fence := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "```") {
				fence = !fence
			}
			if !fence && strings.HasPrefix(line, "#") && date.MatchString(line) {
				t.Errorf("%s:%d: %q: a dated section; move it to docs/notes/DATE-topic.md and link it", f, i+1, line)
			}
		}
	}
	notes, _ := filepath.Glob("../../docs/notes/*.md")
	name := regexp.MustCompile(`^20[0-9]{2}-[01][0-9]-[0-3][0-9]-[a-z0-9-]+\.md$`)
	for _, n := range notes {
		if !name.MatchString(filepath.Base(n)) {
			t.Errorf("docs/notes/%s: want YYYY-MM-DD-topic.md (the date of the measurement)", filepath.Base(n))
		}
	}
}
