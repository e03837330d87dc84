package capacity

import (
	"fmt"
	"io"

	"github.com/rpcbed/rpcbed/internal/results"
	"github.com/rpcbed/rpcbed/internal/stats"
)

// Agreement is how well two capacity runs of one spec agree: each knee inside
// the other run's interval, and no paired ratio (vs go, vs grpc) whose
// verdict flips from one run to the other.
type Agreement struct {
	// Cells is the cell x SLO pairs compared (a knee found in either run);
	// Inside those where each run's knee lies inside the other's interval.
	Cells, Inside int
	// Ratios is the paired ratios with a verdict in both runs; Flips those
	// that say higher in one run and lower in the other.
	Ratios, Flips int
	// Noisy is the cells outside each other's interval where a knee of either
	// run was noisy (another guest stole CPU while it was measured).
	Noisy int
	Lines []string
}

// AgreeGoal is the share of cells whose knees must lie inside each other's
// intervals for two runs to agree.
const AgreeGoal = 0.90

// Met says the runs agree: at least AgreeGoal of the cells inside, no flip.
func (a Agreement) Met() bool {
	return a.Cells > 0 && float64(a.Inside) >= AgreeGoal*float64(a.Cells) && a.Flips == 0
}

// Agree compares run a with run b cell by cell at every SLO of a.
func Agree(a, b *Run) Agreement {
	var g Agreement
	xa, xb := newIndex(a), newIndex(b)
	for _, slo := range a.Spec.SLOs {
		for i := range a.Cells {
			ca := &a.Cells[i]
			cb := xb[ca.Name]
			ka, kb := kneeOf(ca, slo), (*Knee)(nil)
			if cb != nil {
				kb = kneeOf(cb, slo)
			}
			foundA := ka != nil && ka.Measured()
			foundB := kb != nil && kb.Measured()
			if !foundA && !foundB {
				continue
			}
			g.Cells++
			if !foundA || !foundB {
				g.Lines = append(g.Lines, fmt.Sprintf("%s at %s: a knee in one run only (A %s, B %s)", ca.Name, slo.Key(), status(ka), status(kb)))
				continue
			}
			in := ka.Rate >= kb.Low && ka.Rate <= kb.High && kb.Rate >= ka.Low && kb.Rate <= ka.High
			if in {
				g.Inside++
			} else {
				g.Lines = append(g.Lines, fmt.Sprintf("%s at %s: A %s, B %s: not inside each other's interval", ca.Name, slo.Key(), kneeCell(*ka), kneeCell(*kb)))
				if ka.Noisy() || kb.Noisy() {
					g.Noisy++
				}
			}
			for _, peer := range []struct{ client, proto, what string }{{"go", ca.Cell.Protocol, "vs go"}, {ca.Cell.Client, "grpc", "vs grpc"}} {
				if peer.client == ca.Cell.Client && peer.proto == ca.Cell.Protocol {
					continue
				}
				pa, pb := xa.peer(ca.Cell, peer.client, peer.proto), xb.peer(ca.Cell, peer.client, peer.proto)
				if pa == nil || pb == nil {
					continue
				}
				ra, rb := Ratio(ka, kneeOf(pa, slo)), Ratio(kb, kneeOf(pb, slo))
				if !ra.Valid() || !rb.Valid() {
					continue
				}
				va, vb := ra.Verdict(true), rb.Verdict(true)
				if va == stats.Indistinguishable || vb == stats.Indistinguishable {
					continue
				}
				g.Ratios++
				if va != vb {
					g.Flips++
					g.Lines = append(g.Lines, fmt.Sprintf("%s at %s %s: A %s, B %s: the ranking flips", ca.Name, slo.Key(), peer.what, ratioText(ra), ratioText(rb)))
				}
			}
		}
	}
	return g
}

func status(k *Knee) string {
	if k == nil {
		return "not searched"
	}
	return KneeText(*k)
}

// Print writes the agreement: the disagreeing cells, then the verdict.
func (g Agreement) Print(w io.Writer, a, b string) {
	for _, l := range g.Lines {
		fmt.Fprintln(w, l)
	}
	share := 0.0
	if g.Cells > 0 {
		share = float64(g.Inside) / float64(g.Cells)
	}
	verdict := "met"
	if !g.Met() {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "capacity agreement %s vs %s: %d of %d knees inside each other's interval (%.0f %%, goal %.0f %%), %d of %d paired rankings flipped (goal 0): %s\n",
		a, b, g.Inside, g.Cells, share*100, AgreeGoal*100, g.Flips, g.Ratios, verdict)
	if g.Noisy > 0 {
		fmt.Fprintf(w, "%d of the %d knees outside each other's interval were measured with steal over %.0f %% of a core (noisy)\n",
			g.Noisy, g.Cells-g.Inside, results.NoisyStealCores*100)
	}
}
