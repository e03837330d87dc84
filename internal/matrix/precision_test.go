package matrix

import (
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/results"
)

// TestFixedCost: the later groups' fixed cost is one start per group and one
// prime per primed worker at its limit, counted once per group.
func TestFixedCost(t *testing.T) {
	spec := plan.Spec{
		Prime:    map[string]plan.Duration{"java": plan.Duration(time.Second)},
		PrimeMax: map[string]plan.Duration{"java": plan.Duration(16 * time.Second), "java-dubbo": plan.Duration(20 * time.Second)},
	}
	cell := func(client, protocol, server string, items int) plan.Cell {
		return plan.Cell{Client: client, Protocol: protocol, ServerLang: server, Items: items}
	}
	for _, tc := range []struct {
		name  string
		cells []plan.Cell
		want  time.Duration
	}{
		{"none", nil, 0},
		{"go only", []plan.Cell{cell("go", "grpc", "go", 2), cell("php", "grpc", "go", 2)}, groupStart},
		{"java worker once per group", []plan.Cell{cell("java", "grpc", "go", 2), cell("java", "grpc", "go", 200)}, groupStart + 16*time.Second},
		{"two java groups", []plan.Cell{
			cell("java", "ice", "java", 2), cell("php", "ice", "java", 2),
			cell("java", "dubbo", "java", 2), cell("java", "dubbo", "java", 200),
		}, 2*groupStart + 16*time.Second + 20*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &executor{run: &results.Run{Spec: spec}}
			if got := e.fixedCost(tc.cells); got != tc.want {
				t.Errorf("fixedCost = %v, want %v", got, tc.want)
			}
		})
	}
}
