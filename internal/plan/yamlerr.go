package plan

import (
	"fmt"
	"strings"
)

// yamlSyntaxError makes a YAML syntax error name the line it is on. yaml.v3
// reports an unclosed flow collection at the line where its parser's context
// began, counted from 0 ("items: [2, 200" on line 2 is "line 1"), and a stray
// closing bracket at the enclosing mapping's line: when a bracket of src is never
// closed, or closes nothing, that bracket's line and key are the error.
// Otherwise the error is yaml's own.
func yamlSyntaxError(src []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if !strings.Contains(msg, "did not find expected") {
		return nil
	}
	line, col, what := strayBracket(string(src))
	if line == 0 {
		return nil
	}
	why := msg
	if _, rest, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(msg, "line ") {
		why = rest
	}
	return fieldErr(keyOn(string(src), line, col), "line %d: %s (yaml: %s)", line, what, why)
}

// strayBracket finds the first flow bracket of src that closes nothing or the
// wrong bracket, or else
// the innermost one never closed: its 1-based line and 0-based column and what
// is wrong with it. Quoted strings and comments are skipped. line 0: none.
func strayBracket(src string) (line, col int, what string) {
	type open struct {
		ch        byte
		line, col int
	}
	var stack []open
	for i, l := range strings.Split(src, "\n") {
		var quote byte
		for j := 0; j < len(l); j++ {
			c := l[j]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '#' && (j == 0 || l[j-1] == ' ' || l[j-1] == '\t'):
				j = len(l)
			case c == '[' || c == '{':
				stack = append(stack, open{c, i + 1, j})
			case c == ']' || c == '}':
				want := byte('[')
				if c == '}' {
					want = '{'
				}
				if len(stack) == 0 {
					return i + 1, j, fmt.Sprintf("%q closes nothing", string(c))
				}
				if o := stack[len(stack)-1]; o.ch != want {
					return i + 1, j, fmt.Sprintf("%q where the %q of line %d wants %q", string(c), string(o.ch), o.line, closerOf(o.ch))
				}
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) == 0 {
		return 0, 0, ""
	}
	o := stack[len(stack)-1]
	return o.line, o.col, fmt.Sprintf("%q is never closed (no %q after it)", string(o.ch), closerOf(o.ch))
}

func closerOf(open byte) string {
	if open == '{' {
		return "}"
	}
	return "]"
}

// keyOn is the key whose value holds column col of 1-based line of src: the
// last "key:" before it on that line ("items" in "items: [2, 200"), else the
// line's first key, else "?" when the line has none.
func keyOn(src string, line, col int) string {
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) {
		return "?"
	}
	l := lines[line-1]
	head := l[:min(col, len(l))]
	if i := strings.LastIndex(head, ":"); i >= 0 {
		k := strings.TrimSpace(head[:i])
		k = k[strings.LastIndexAny(k, " \t{,[")+1:]
		if k = strings.Trim(k, `-'"`); k != "" {
			return k
		}
	}
	if k, _, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "-")), ":"); ok && k != "" {
		return strings.Trim(k, `'"`)
	}
	return "?"
}
