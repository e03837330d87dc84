package results

import (
	"fmt"
	"strings"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/report"
)

// Conditions are measured, not assumed: a cell's asked security and connection
// mode are checked against what its client's report says was negotiated and
// opened. A cell that did not run the conditions its name says carries a
// mismatch flag and is left out of every comparison (analysis: its ratios
// would compare another condition than the one named).
const (
	// FlagTLSMismatch: the report's TLS differs from the cell's security: TLS
	// asked and none reported (or the reverse), another version than asked, or
	// session resumption asked on (off) and no (some) handshake resumed.
	FlagTLSMismatch = "tls-mismatch"
	// FlagConnectMismatch: a per-call cell whose connections opened in the
	// window differ from its calls by more than the calls in flight at the
	// window's two edges (its concurrency), or that reported none; a persistent
	// TLS cell that handshook more often than it has connections and on over
	// PersistentHandshakes of its calls (it reconnected).
	FlagConnectMismatch = "connect-mismatch"
)

// PersistentHandshakes is the share of a persistent cell's calls past which
// its handshakes in the window say it did not keep its connections.
const PersistentHandshakes = 0.01

// DropsComparisons says whether a cell carrying flag is left out of every
// comparison: its figures stand in its own row, but it ran another condition
// than its name says.
func DropsComparisons(flag string) bool {
	return flag == FlagTLSMismatch || flag == FlagConnectMismatch
}

// TLSMismatch is why r's negotiated TLS is not the security c asked (none: it
// is, or the report cannot tell). A version the client cannot tell ("-",
// docs/clients.md) is not a mismatch; mtls cannot be told from the client's
// side (the server requires the client's certificate, so a handshake that
// completed presented one).
func TLSMismatch(c plan.Cell, r *report.Report) []string {
	if r == nil || r.Rpcbed == nil {
		return nil // ab, a front: no rpcbed block to tell by
	}
	sec, t := c.Sec(), r.Rpcbed.TLS
	switch {
	case !sec.IsTLS() && t != nil:
		return []string{fmt.Sprintf("asked plaintext; the client negotiated %s", t.Version)}
	case !sec.IsTLS():
		return nil
	case t == nil:
		return []string{fmt.Sprintf("asked %s; the report names no TLS (no \"TLS:\" line)", sec)}
	}
	var why []string
	if want := "TLSv" + sec.Version(); t.Version != "-" && t.Version != want {
		why = append(why, fmt.Sprintf("asked %s, negotiated %s", want, t.Version))
	}
	if t.Handshakes >= 2 {
		switch {
		case sec.Resume == "on" && t.Resumed == 0:
			why = append(why, fmt.Sprintf("asked session resumption; none of %d handshakes resumed", t.Handshakes))
		case sec.Resume == "off" && t.Resumed > 0:
			why = append(why, fmt.Sprintf("asked no session resumption; %d of %d handshakes resumed", t.Resumed, t.Handshakes))
		}
	}
	return why
}

// ConnectMismatch is why r's connections are not c's connection mode (none:
// they are).
func ConnectMismatch(c plan.Cell, r *report.Report) []string {
	if r == nil || r.Rpcbed == nil {
		return nil
	}
	x := r.Rpcbed
	calls := r.Complete
	if c.ConnectMode() == plan.PerCall {
		if x.ConnectionsOpened == nil {
			return []string{"asked a connection per call; the report names none opened (no \"Connections opened:\" line)"}
		}
		edge := int64(max(r.Concurrency, c.Concurrency, 1))
		if d := *x.ConnectionsOpened - calls; d > edge || -d > edge {
			return []string{fmt.Sprintf("asked a connection per call; %d opened for %d calls in the window (%d in flight at each edge may differ)", *x.ConnectionsOpened, calls, edge)}
		}
		return nil
	}
	if t := x.TLS; t != nil && t.Handshakes > int64(x.Connections) && float64(t.Handshakes) > PersistentHandshakes*float64(calls) {
		return []string{fmt.Sprintf("asked persistent connections; %d handshakes over %d calls with %d connections in the window", t.Handshakes, calls, x.Connections)}
	}
	return nil
}

// conditionReasons are every repeat's mismatches, "rN flag: why" each, by flag.
func (c CellResult) conditionReasons() [][2]string {
	var out [][2]string
	for _, r := range c.Repeats {
		if r.Report == nil {
			continue
		}
		for _, m := range []struct {
			flag string
			why  []string
		}{{FlagTLSMismatch, TLSMismatch(c.Cell, r.Report)}, {FlagConnectMismatch, ConnectMismatch(c.Cell, r.Report)}} {
			if len(m.why) > 0 {
				out = append(out, [2]string{m.flag, fmt.Sprintf("r%d %s: %s", r.Index, m.flag, strings.Join(m.why, "; "))})
			}
		}
	}
	return out
}
