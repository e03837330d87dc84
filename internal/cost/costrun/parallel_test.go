package costrun

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/cost"
	"github.com/rpcbed/rpcbed/internal/cost/costplan"
)

// Two cells at once: every cell measured once; the server side in plan order
// on the server's CPU (one go-server under callgrind, each cell warming the
// next); never two processes under callgrind on one CPU; client-side cells on
// the server's CPU only after the server side is done; the longest first.
func TestRunParallel(t *testing.T) {
	s := costplan.Spec{
		Clients: map[string][]string{"go": {"grpc", "thrift"}, "php": {"grpc"}},
		Items:   []int{2, 200},
		Sides:   []string{costplan.SideClient, costplan.SideServer},
		Calls:   costplan.Calls{Short: 20, Long: 220},
		Servers: map[string]string{"grpc": "go", "thrift": "go"},
	}
	cells, _ := s.Plan()
	o := Options{Spec: s, ClientCPU: "1", ServerCPU: "0", Parallel: 2,
		Expected: map[string]float64{"php-grpc-datalist-200-c1/client": 900}}
	if !o.parallel() {
		t.Fatal("Parallel 2 on CPUs 1 and 0 is not parallel")
	}
	layers, err := cost.NewLayers(cost.Rules)
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		id, cpu string
		start   bool
	}
	var mu sync.Mutex
	var events []event
	busy := map[string]string{} // CPU -> the cell under callgrind there
	measure := func(e *executor, c costplan.Cell) {
		cpu := e.valgrindCPU(c)
		mu.Lock()
		if other, ok := busy[cpu]; ok {
			t.Errorf("%s under callgrind on CPU %s while %s runs there", c.ID(), cpu, other)
		}
		busy[cpu] = c.ID()
		events = append(events, event{c.ID(), cpu, true})
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		delete(busy, cpu)
		events = append(events, event{c.ID(), cpu, false})
		mu.Unlock()
	}
	runParallel(context.Background(), o, layers, cells, measure)
	seen := map[string]int{}
	var server []string
	lastServerEnd, firstClientOn0 := -1, -1
	for i, ev := range events {
		if !ev.start {
			if len(ev.id) > 7 && ev.id[len(ev.id)-7:] == "/server" {
				lastServerEnd = i
			}
			continue
		}
		seen[ev.id]++
		if ev.id[len(ev.id)-7:] == "/server" {
			if ev.cpu != "0" {
				t.Errorf("%s: server side under callgrind on CPU %s; want the server's CPU 0", ev.id, ev.cpu)
			}
			server = append(server, ev.id)
		} else if ev.cpu == "0" && firstClientOn0 < 0 {
			firstClientOn0 = i
		}
	}
	for _, c := range cells {
		if seen[c.ID()] != 1 {
			t.Errorf("%s measured %d times; want once", c.ID(), seen[c.ID()])
		}
	}
	var want []string
	for _, c := range cells {
		if c.Side == costplan.SideServer {
			want = append(want, c.ID())
		}
	}
	if len(server) != len(want) {
		t.Fatalf("server side %v; want %v", server, want)
	}
	for i := range want {
		if server[i] != want[i] {
			t.Errorf("server side out of plan order: %v; want %v", server, want)
			break
		}
	}
	if firstClientOn0 >= 0 && firstClientOn0 < lastServerEnd {
		t.Errorf("a client-side cell ran on CPU 0 before the server side was done")
	}
	for _, ev := range events {
		if ev.start && ev.id[len(ev.id)-7:] == "/client" {
			if ev.id != "php-grpc-datalist-200-c1/client" {
				t.Errorf("the first client-side cell is %s; want the longest expected, php-grpc-datalist-200-c1/client", ev.id)
			}
			break
		}
	}
}
