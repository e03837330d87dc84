package results

import (
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
)

// The asked security and connection mode against what the report says was
// negotiated and opened: each mismatch named, a match silent.
func TestConditionMismatch(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	tls := func(version string, hs, resumed int64) *report.TLS {
		return &report.TLS{Version: version, CipherSuite: "TLS_AES_128_GCM_SHA256", Group: "X25519", ALPN: "h2", Handshakes: hs, Resumed: resumed}
	}
	rep := func(t *report.TLS, opened *int64) *report.Report {
		return &report.Report{Complete: 1000, Concurrency: 10, Rpcbed: &report.Extra{Connections: 10, TLS: t, ConnectionsOpened: opened}}
	}
	cell := func(sec, connect string) plan.Cell {
		return plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 10, Security: sec, Connect: connect}
	}
	for _, tc := range []struct {
		name      string
		cell      plan.Cell
		report    *report.Report
		flag, why string // "": no mismatch
	}{
		{"plaintext", cell("", ""), rep(nil, nil), "", ""},
		{"tls as asked", cell("tls", ""), rep(tls("TLSv1.3", 0, 0), nil), "", ""},
		{"tls12 as asked", cell("tls+tls12", ""), rep(tls("TLSv1.2", 0, 0), nil), "", ""},
		{"version the client cannot tell", cell("tls", ""), rep(tls("-", 0, 0), nil), "", ""},
		{"no report block (ab)", cell("tls", ""), &report.Report{Complete: 10}, "", ""},
		{"tls asked, none reported", cell("tls", ""), rep(nil, nil), FlagTLSMismatch, "the report names no TLS"},
		{"plaintext asked, tls reported", cell("", ""), rep(tls("TLSv1.3", 0, 0), nil), FlagTLSMismatch, "asked plaintext; the client negotiated TLSv1.3"},
		{"1.3 asked, 1.2 negotiated", cell("tls", ""), rep(tls("TLSv1.2", 0, 0), nil), FlagTLSMismatch, "asked TLSv1.3, negotiated TLSv1.2"},
		{"1.2 asked, 1.3 negotiated", cell("mtls+tls12", ""), rep(tls("TLSv1.3", 0, 0), nil), FlagTLSMismatch, "asked TLSv1.2, negotiated TLSv1.3"},
		{"resume asked, resumed", cell("tls+resume", "per-call"), rep(tls("TLSv1.3", 1000, 999), n(1000)), "", ""},
		{"resume asked, none resumed", cell("tls+resume", "per-call"), rep(tls("TLSv1.3", 1000, 0), n(1000)), FlagTLSMismatch, "none of 1000 handshakes resumed"},
		{"noresume asked, some resumed", cell("tls+noresume", "per-call"), rep(tls("TLSv1.3", 1000, 3), n(1000)), FlagTLSMismatch, "3 of 1000 handshakes resumed"},
		{"resume asked, one handshake cannot tell", cell("tls+resume", ""), rep(tls("TLSv1.3", 1, 0), nil), "", ""},
		{"per-call as asked", cell("tls", "per-call"), rep(tls("TLSv1.3", 1000, 0), n(1000)), "", ""},
		{"per-call, in flight at the edges", cell("", "per-call"), rep(nil, n(1010)), "", ""},
		{"per-call, too few opened", cell("", "per-call"), rep(nil, n(500)), FlagConnectMismatch, "500 opened for 1000 calls"},
		{"per-call, too many opened", cell("", "per-call"), rep(nil, n(1011)), FlagConnectMismatch, "1011 opened for 1000 calls"},
		{"per-call, none reported", cell("", "per-call"), rep(nil, nil), FlagConnectMismatch, "no \"Connections opened:\" line"},
		{"persistent, handshakes at the start", cell("tls", ""), rep(tls("TLSv1.3", 10, 0), nil), "", ""},
		{"persistent, reconnecting", cell("tls", ""), rep(tls("TLSv1.3", 400, 0), nil), FlagConnectMismatch, "400 handshakes over 1000 calls with 10 connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string][]string{FlagTLSMismatch: TLSMismatch(tc.cell, tc.report), FlagConnectMismatch: ConnectMismatch(tc.cell, tc.report)}
			for flag, why := range got {
				want := flag == tc.flag
				if (len(why) > 0) != want {
					t.Fatalf("%s: got %q; want raised %v", flag, why, want)
				}
				if want && !strings.Contains(strings.Join(why, "; "), tc.why) {
					t.Errorf("%s: got %q; want it to say %q", flag, why, tc.why)
				}
			}
		})
	}
}

// A mismatch in one round is the cell's flag, with the round and the reason,
// in the summary every table reads; it leaves the cell out of comparisons.
func TestConditionMismatchSummary(t *testing.T) {
	c := CellResult{Name: "go-grpc-datalist-200-c10@tls", Cell: plan.Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 10, Security: "tls"}}
	for i, v := range []string{"TLSv1.3", "TLSv1.2"} {
		c.Repeats = append(c.Repeats, Repeat{Index: i + 1, Report: &report.Report{Complete: 100, Concurrency: 10,
			Rpcbed: &report.Extra{TLS: &report.TLS{Version: v, CipherSuite: "-", Group: "-", ALPN: "h2"}}}})
	}
	s := c.Summarize()
	if len(s.Flags) != 1 || s.Flags[0] != FlagTLSMismatch || !DropsComparisons(s.Flags[0]) {
		t.Fatalf("flags %v; want [%s], dropping comparisons", s.Flags, FlagTLSMismatch)
	}
	if want := "r2 tls-mismatch: asked TLSv1.3, negotiated TLSv1.2"; len(s.Reasons) != 1 || s.Reasons[0] != want {
		t.Errorf("reasons %q; want [%q]", s.Reasons, want)
	}
	if _, ok := FlagDocOf(FlagTLSMismatch); !ok {
		t.Errorf("%s: not in FlagDocs (matrix.md's legend, the page's Needs attention)", FlagTLSMismatch)
	}
	if _, ok := FlagDocOf(FlagConnectMismatch); !ok {
		t.Errorf("%s: not in FlagDocs", FlagConnectMismatch)
	}
}
