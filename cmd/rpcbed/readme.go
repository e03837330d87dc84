package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/analysis"
	"github.com/rpcbed/rpcbed/internal/capacity"
	"github.com/rpcbed/rpcbed/internal/render"
	"github.com/rpcbed/rpcbed/internal/results"
)

// docBlocks are the generated blocks the repository's Markdown may hold, by name
// (docs/generated.md). Each prints from a committed run or a command, so a
// figure in the README cannot drift from the run it quotes. Add one line to add
// a block.
func docBlocks(root string) map[string]render.Block {
	fromRun := func(print func(io.Writer, *results.Run) error) render.Block {
		return func(w io.Writer, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one argument, the run directory; got %q", args)
			}
			run, err := results.LoadRun(filepath.Join(root, args[0]))
			if err != nil {
				return err
			}
			return print(w, run)
		}
	}
	return map[string]render.Block{
		"results-table": fromRun(render.ResultsTable),
		"run-facts":     fromRun(render.RunFacts),
		"link-table":    fromRun(render.LinkTable),
		"tls-costs":     fromRun(render.TLSCostTable),
		"answers": func(w io.Writer, args []string) error {
			if len(args) < 1 {
				return fmt.Errorf("want the run directory, then the answers whose table to print; got %q", args)
			}
			dir := filepath.Join(root, args[0])
			run, err := results.LoadRun(dir)
			if err != nil {
				return err
			}
			x, err := render.LoadExtras(dir)
			if err != nil {
				return err
			}
			answers, grids, err := selectAnswers(render.Answers(render.AnswerInput{View: analysis.ViewOf(run), Extras: x}), args[1:])
			if err != nil {
				return err
			}
			return render.AnswersMarkdown(w, answers, args[0], grids...)
		},
		"capacity-table": func(w io.Writer, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("want one argument, the capacity run directory; got %q", args)
			}
			run, err := capacity.Load(filepath.Join(root, args[0]))
			if err != nil {
				return err
			}
			return capacity.ReadmeBlock(w, run)
		},
		"reproduction-across": func(w io.Writer, args []string) error {
			var runs []render.ReproductionRun
			for _, d := range args {
				b, err := os.ReadFile(filepath.Join(root, d, "reproduction.json"))
				if err != nil {
					return err
				}
				r := render.ReproductionRun{Dir: d}
				if err := json.Unmarshal(b, &r.Sections); err != nil {
					return fmt.Errorf("%s/reproduction.json: %w", d, err)
				}
				runs = append(runs, r)
			}
			return render.ReproductionAcross(w, runs)
		},
		"reproducibility": func(w io.Writer, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("want two arguments, run directories A and B; got %q", args)
			}
			var runs [2]*results.Run
			for i, d := range args {
				r, err := results.LoadRun(filepath.Join(root, d))
				if err != nil {
					return err
				}
				runs[i] = r
			}
			return render.Reproducibility(w, runs[0], runs[1])
		},
	}
}

// selectAnswers reads the answers block's arguments after the run: "only:ID,ID"
// keeps those answers (another committed run answers the rest: README quotes the
// TLS answer from results/reference-tls), "skip:ID,ID" leaves them out, and every other
// argument names an answer whose table to print. An ID no answer has is an error
// naming it.
func selectAnswers(all []render.Answer, args []string) ([]render.Answer, []string, error) {
	known := make(map[string]bool, len(all))
	for _, a := range all {
		known[a.ID] = true
	}
	keep := func(render.Answer) bool { return true }
	var grids []string
	for _, arg := range args {
		kind, list, sel := strings.Cut(arg, ":")
		ids := []string{arg}
		if sel {
			ids = strings.Split(list, ",")
		}
		for _, id := range ids {
			if !known[id] {
				return nil, nil, fmt.Errorf("answers: argument %q: no answer has the ID %q", arg, id)
			}
		}
		switch {
		case !sel:
			grids = append(grids, arg)
		case kind == "only" || kind == "skip":
			prev, want := keep, kind == "only"
			keep = func(a render.Answer) bool { return prev(a) && slices.Contains(ids, a.ID) == want }
		default:
			return nil, nil, fmt.Errorf("answers: argument %q: want ID, only:ID,... or skip:ID,...", arg)
		}
	}
	var out []render.Answer
	for _, a := range all {
		if keep(a) {
			out = append(out, a)
		}
	}
	return out, grids, nil
}

// docFiles are the files `rpcbed readme` rewrites when given none.
func docFiles(root string) []string {
	files := []string{filepath.Join(root, "README.md")}
	more, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	return append(files, more...)
}

// runReadme is `rpcbed readme`: print every generated block of the README and
// docs again from the committed runs it names.
func runReadme(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("readme", flag.ContinueOnError)
	fs.SetOutput(s.err)
	check := fs.Bool("check", false, "rewrite nothing; exit 1 naming every block that differs from what it would print")
	root := fs.String("root", ".", "repository root: run directories in the markers are relative to it")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: rpcbed readme [-check] [-root DIR] [FILE.md...]\n\n"+
			"Rewrites the generated blocks of README.md and docs/*.md (or the files given):\n"+
			"the lines between <!-- rpcbed:begin NAME ARGS --> and <!-- rpcbed:end --> become\n"+
			"what block NAME prints for ARGS, e.g. results-table results/reference.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		files = docFiles(*root)
	}
	blocks := docBlocks(*root)
	stale := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed readme: %v\n", err)
			return 1
		}
		out, changed, err := render.FillBlocks(b, blocks)
		if err != nil {
			fmt.Fprintf(s.err, "rpcbed readme: %s: %v\n", f, err)
			return 1
		}
		for _, c := range changed {
			fmt.Fprintf(s.out, "%s: block %s differs from what it prints\n", f, c)
		}
		stale += len(changed)
		if !*check && len(changed) > 0 {
			if err := results.WriteFileAtomic(f, out); err != nil {
				fmt.Fprintf(s.err, "rpcbed readme: %v\n", err)
				return 1
			}
		}
	}
	if *check && stale > 0 {
		fmt.Fprintf(s.err, "rpcbed readme: %d generated blocks are stale: run rpcbed readme (make readme)\n", stale)
		return 1
	}
	return 0
}
