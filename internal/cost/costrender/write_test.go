package costrender

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/coststats"
)

var referenceDir = filepath.Join("..", "..", "..", "results", "reference")

// renderReference writes cost.md of the committed reference run, set against
// the reference matrix's CPU per call.
func renderReference(t *testing.T) (*cost.Result, string) {
	t.Helper()
	r, err := cost.LoadResult(filepath.Join(referenceDir, "cost"))
	if err != nil {
		t.Fatal(err)
	}
	timed, err := cost.LoadTimed(referenceDir)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteMD(&b, r, timed); err != nil {
		t.Fatal(err)
	}
	return r, b.String()
}

// table gives the rows of the Markdown table under heading h: its head and its
// cells, split on |.
func table(t *testing.T, md, h string) (head []string, rows [][]string) {
	t.Helper()
	i := strings.Index(md, "\n## "+h+"\n")
	if i < 0 {
		t.Fatalf("no section %q", h)
	}
	for _, l := range strings.Split(md[i+1:], "\n")[1:] {
		if strings.HasPrefix(l, "## ") {
			break
		}
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if head == nil {
			head = cells
			continue
		}
		rows = append(rows, cells)
	}
	return head, rows
}

// Every share printed is a whole percentage from 0 to 100, or —.
func TestSharesInBounds(t *testing.T) {
	_, md := renderReference(t)
	for _, side := range []string{"Client side (client under callgrind, native server)", "Server side (go-server under callgrind, native client)"} {
		head, rows := table(t, md, side)
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", side)
		}
		for _, l := range []string{cost.LayerCodec, cost.LayerRPC, cost.LayerTransport, cost.LayerRuntime, cost.LayerRpcbed, cost.LayerOther} {
			col := slices.Index(head, layerHeads[l])
			if col < 0 {
				t.Fatalf("%s: no %s column in %v", side, l, head)
			}
			for _, row := range rows {
				v := row[col]
				if v == NoFigure {
					continue
				}
				n, err := strconv.Atoi(strings.TrimSuffix(v, " %"))
				if err != nil || n < 0 || n > 100 {
					t.Errorf("%s %s: %s share %q; want 0 %% to 100 %%", side, row[0], l, v)
				}
			}
		}
	}
	if !strings.Contains(md, "| go-grpc-datalist-5000-c1 "+FlaggedMark+" |") {
		t.Error("the server side's go-grpc-datalist-5000-c1 (codec 119 % before) is not flagged")
	}
}

// Instructions per CPU ns: printed only within what a core retires, in the
// order they are printed, every point beyond flagged.
func TestPerNsPlausibleAndSorted(t *testing.T) {
	_, md := renderReference(t)
	head, rows := table(t, md, "Counts against the matrix's CPU per call")
	col := slices.Index(head, "instructions per CPU ns")
	if col < 0 {
		t.Fatalf("no instructions per CPU ns column in %v", head)
	}
	prev, beyond := 0.0, 0
	for _, row := range rows {
		v := row[col]
		if row[0] == "…" {
			continue
		}
		if strings.HasPrefix(v, "beyond ") {
			beyond++
			prev = coststats.MaxInstructionsPerNs
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s: %q", row[0], v)
		}
		if x <= 0 || x > coststats.MaxInstructionsPerNs {
			t.Errorf("%s: %v instructions per CPU ns printed as a figure; want (0, %v]", row[0], x, coststats.MaxInstructionsPerNs)
		}
		if x < prev {
			t.Errorf("%s: %v after %v: out of order", row[0], x, prev)
		}
		prev = x
	}
	if beyond != 1 || !strings.Contains(md, "php-pure-thrift-datalist-200-c1's client side") {
		t.Errorf("%d points beyond, want php-pure-thrift-datalist-200-c1's client side (52.52 est. cycles per ns before)", beyond)
	}
	for _, p := range []coststats.TimedPoint{{PerNs: 0}, {PerNs: 20.1}, {PerNs: -1}} {
		if p.Plausible() {
			t.Errorf("%v instructions per ns plausible", p.PerNs)
		}
	}
}

var stack = regexp.MustCompile(`\b(go|php-pure|php|java)-(grpc|thrift|http|ice|dubbo)\b`)

// A reason names its own row first: java-http's did say "java-thrift made its
// 10 calls", php-ice's server side grpc-java's epoll.
func TestReasonsNameTheirRow(t *testing.T) {
	r, md := renderReference(t)
	_, rows := table(t, md, "Not measured or failed")
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, row := range rows {
		own := strings.Join(strings.SplitN(row[0], "-", 3)[:2], "-")
		if strings.HasPrefix(row[0], "php-pure-") {
			own = strings.Join(strings.SplitN(row[0], "-", 4)[:3], "-")
		}
		if first := stack.FindString(row[3]); first != own {
			t.Errorf("%s %s: the reason names %q first; want %q: %s", row[0], row[1], first, own, row[3])
		}
		if row[1] == cost.SideServer && strings.Contains(row[3], "epoll") && !strings.Contains(row[0], "grpc") {
			t.Errorf("%s server: grpc-java's epoll given as the reason", row[0])
		}
	}
	_ = r
}

// A TLS cell is set against its plaintext twin: the ratio, the crypto layer per
// call and the handshake (the crypto layer's per-run part over the twin's).
func TestTLSRows(t *testing.T) {
	pc := func(ir, crypto float64) cost.PerCall {
		return cost.PerCall{Counts: cost.Counts{Ir: ir}, Layers: map[string]float64{cost.LayerCodec: ir - crypto, cost.LayerCrypto: crypto}}
	}
	r := &cost.Result{Cells: []cost.CellRun{
		{Cell: "go-grpc-datalist-200-c1", Side: cost.SideServer, Status: cost.StatusOK, PerCall: pc(400000, 10000),
			PerRun: map[string]float64{cost.LayerCrypto: 5000}},
		{Cell: "go-grpc-datalist-200-c1@tls", Side: cost.SideServer, Security: "tls", Status: cost.StatusOK, PerCall: pc(430000, 40000),
			PerRun: map[string]float64{cost.LayerCrypto: 2765000}},
		{Cell: "go-http-datalist-200-c1@tls", Side: cost.SideServer, Security: "tls", Status: cost.StatusOK, PerCall: pc(1, 0)}, // no twin
	}}
	rows := TLSRows(r)
	if len(rows) != 1 {
		t.Fatalf("rows %+v; want one", rows)
	}
	x := rows[0]
	if x.Ratio != 430000.0/400000 || x.Crypto != 40000 || x.Handshake != 2760000 || x.CryptoShare != 40000.0/430000 {
		t.Errorf("%+v", x)
	}
	var b bytes.Buffer
	if err := WriteMD(&b, r, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| go-grpc-datalist-200-c1@tls | server | 430,000 | 400,000 | 1.07x | 40,000 | 9 % | 2,760,000 |") {
		t.Errorf("cost.md lacks the TLS row:\n%s", b.String())
	}
	page, err := HTMLSection(r, nil, "cost")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<td>go-grpc-datalist-200-c1@tls</td><td>server</td><td>430,000</td><td>400,000</td><td>1.07x</td><td>40,000</td><td>9 %</td><td>2,760,000</td>") {
		t.Error("index.html's cost section lacks the TLS row")
	}
}
