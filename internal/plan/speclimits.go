package plan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits on a spec's size, checked before it is parsed (README: Limits): a 15 MB
// spec (a long items list) took 6.2 s and 1574 MB to be refused, and a 400 000
// entry exclude list was accepted (issue 28 #2). The YAML library's tree of a
// 256 KiB flow list takes about 25 MB; real specs are under 8 KB.
const (
	// MaxSpecBytes bounds a spec file, checked on its size before it is read.
	MaxSpecBytes = 256 << 10
	// MaxListEntries bounds any list or mapping in a spec that specLists does not
	// name.
	MaxListEntries = 1000
)

// specLists bounds the entries of each list or mapping, by its path in the spec;
// a deeper one (clients.php) falls back on its parent's path with ".*".
var specLists = map[string]int{
	"clients":     len(Clients),
	"clients.*":   len(Protocols),
	"calls":       len(Calls),
	"items":       100,
	"concurrency": 100,
	"servers":     len(Protocols),
	"prime":       len(Clients),
	"prime_max":   64,
	"hosts":       64,
	"links":       64,
	"overrides":   MaxListEntries,
	"exclude":     MaxListEntries,
	"security":    32,
	"connect":     len(ConnectModes),
}

// sizeError is the refusal of an oversized spec, r: read in lines at constant
// memory, it names the top-level key whose lines take most of it.
func sizeError(r io.Reader) error {
	key, n, size := biggestKey(r)
	if key == "" {
		return fmt.Errorf("spec: %d bytes; want at most %d (%d KiB)", size, MaxSpecBytes, MaxSpecBytes>>10)
	}
	return fieldErr(key, "the spec is %d bytes, %d of them in %s; want at most %d (%d KiB) in all",
		size, n, key, MaxSpecBytes, MaxSpecBytes>>10)
}

// biggestKey reads a YAML document line by line and returns the top-level key
// (a line starting a mapping key at column 0) whose lines hold most bytes, their
// bytes and the document's.
func biggestKey(r io.Reader) (key string, keyBytes, total int64) {
	br := bufio.NewReaderSize(r, 64<<10)
	sizes := map[string]int64{}
	cur := ""
	atStart := true // at the start of a line
	for {
		chunk, err := br.ReadSlice('\n')
		if atStart && len(chunk) > 0 && chunk[0] != ' ' && chunk[0] != '\t' && chunk[0] != '#' && chunk[0] != '-' {
			if k, _, ok := strings.Cut(string(chunk[:min(len(chunk), 200)]), ":"); ok && !strings.ContainsAny(k, "{[,\"' ") {
				cur = k
			}
		}
		sizes[cur] += int64(len(chunk))
		total += int64(len(chunk))
		atStart = err == nil // ErrBufferFull: the line goes on
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	for k, v := range sizes {
		if k != "" && (v > keyBytes || v == keyBytes && k < key) {
			key, keyBytes = k, v
		}
	}
	return key, keyBytes, total
}

// checkSpecLists refuses a list or mapping longer than its limit, naming it, on
// the parsed document (before anything is decoded from it).
func checkSpecLists(doc *yaml.Node) error {
	var walk func(n *yaml.Node, path string, depth int) error
	walk = func(n *yaml.Node, path string, depth int) error {
		if depth > 16 {
			return fieldErr(path, "nested more than 16 deep")
		}
		entries := len(n.Content)
		if n.Kind == yaml.MappingNode {
			entries /= 2
		}
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
			limit, ok := specLists[path]
			if !ok {
				if i := strings.LastIndexByte(path, '.'); i >= 0 {
					limit, ok = specLists[path[:i]+".*"]
				}
			}
			if !ok {
				limit = MaxListEntries
			}
			if entries > limit {
				return fieldErr(path, "%d entries; want at most %d", entries, limit)
			}
		}
		for i := 0; i < len(n.Content); i++ {
			child, p := n.Content[i], path
			switch n.Kind {
			case yaml.MappingNode:
				i++
				if i >= len(n.Content) {
					return nil
				}
				p = joinPath(path, child.Value)
				child = n.Content[i]
			case yaml.SequenceNode:
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			if err := walk(child, p, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if len(doc.Content) == 0 {
		return nil
	}
	return walk(doc.Content[0], "", 0)
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// readSpecFile reads a spec file after checking its size, so an oversized one is
// refused without being read into memory.
func readSpecFile(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxSpecBytes {
		return nil, sizeError(f)
	}
	// Not a regular file (a pipe): its size is known once read, one byte past the
	// limit at most.
	b, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxSpecBytes {
		return nil, sizeError(io.MultiReader(bytes.NewReader(b), f))
	}
	return b, nil
}
