package render

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// A Block prints one generated block of a Markdown file from the arguments its
// begin marker gives (docs/generated.md).
type Block func(w io.Writer, args []string) error

// blockBegin and blockEnd mark a generated block: every line between them is
// what the named Block prints for the marker's arguments.
var (
	blockBegin = regexp.MustCompile(`^<!-- rpcbed:begin ([a-z0-9-]+)((?: [^ ]+)*) -->$`)
	blockEnd   = "<!-- rpcbed:end -->"
)

// FillBlocks returns doc with every generated block printed again by its Block,
// and the names of the blocks whose content changed. A marker naming no Block,
// a begin without its end, or a Block's error is an error naming the line.
func FillBlocks(doc []byte, blocks map[string]Block) (out []byte, changed []string, err error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var b bytes.Buffer
	for i := 0; i < len(lines); i++ {
		b.WriteString(lines[i])
		m := blockBegin.FindStringSubmatch(strings.TrimRight(lines[i], "\n"))
		if m == nil {
			continue
		}
		gen, ok := blocks[m[1]]
		if !ok {
			return nil, nil, fmt.Errorf("line %d: no generated block %q (have %s)", i+1, m[1], blockNames(blocks))
		}
		end := i + 1
		for end < len(lines) && strings.TrimRight(lines[end], "\n") != blockEnd {
			end++
		}
		if end == len(lines) {
			return nil, nil, fmt.Errorf("line %d: block %s has no %s", i+1, m[1], blockEnd)
		}
		var body bytes.Buffer
		if err := gen(&body, strings.Fields(m[2])); err != nil {
			return nil, nil, fmt.Errorf("line %d: block %s: %w", i+1, m[1], err)
		}
		if body.Len() > 0 && !bytes.HasSuffix(body.Bytes(), []byte("\n")) {
			body.WriteByte('\n')
		}
		if old := strings.Join(lines[i+1:end], ""); old != body.String() {
			changed = append(changed, m[1]+strings.TrimRight(m[2], " "))
		}
		b.Write(body.Bytes())
		b.WriteString(lines[end])
		i = end
	}
	return b.Bytes(), changed, nil
}

func blockNames(blocks map[string]Block) string {
	var n []string
	for k := range blocks {
		n = append(n, k)
	}
	if len(n) == 0 {
		return "none"
	}
	slices.Sort(n)
	return strings.Join(n, ", ")
}
