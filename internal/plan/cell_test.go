package plan

import (
	"strings"
	"testing"
	"time"
)

func TestCellName(t *testing.T) {
	for _, tc := range []struct {
		name string
		cell Cell
		want string
	}{
		{"datalist", Cell{Client: "php", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 50}, "php-grpc-datalist-200-c50"},
		{"datatype has no items", Cell{Client: "go", Protocol: "thrift", Call: "datatype", Concurrency: 1}, "go-thrift-datatype-c1"},
		{"variant with a dash", Cell{Client: "php-pure", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 1}, "php-pure-grpc-datalist-200-c1"},
		{"zero items", Cell{Client: "java", Protocol: "dubbo", Call: "datalist", Items: 0, Concurrency: 800}, "java-dubbo-datalist-0-c800"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cell.Name(); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	s, err := ParseSpec([]byte(`
clients: {java: [dubbo, grpc, ice], php: [ice, http], go: [grpc]}
calls: [datatype, datalist]
items: [200, 2]
concurrency: [50, 1]
load: {duration: 1s, warmup: 0.5s}
overrides:
  - {match: "php-*", duration: 3s}
  - {match: "php-*-c50", warmup: 2s}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Plan() {
		names = append(names, c.Name())
	}
	got := strings.Join(names, " ")
	want := strings.Join([]string{
		// go-server first: go, php, java in that order; then the Java baselines: ice, dubbo.
		"go-grpc-datatype-c1", "go-grpc-datatype-c50", "go-grpc-datalist-2-c1", "go-grpc-datalist-2-c50", "go-grpc-datalist-200-c1", "go-grpc-datalist-200-c50",
		"php-http-datatype-c1", "php-http-datatype-c50", "php-http-datalist-2-c1", "php-http-datalist-2-c50", "php-http-datalist-200-c1", "php-http-datalist-200-c50",
		"java-grpc-datatype-c1", "java-grpc-datatype-c50", "java-grpc-datalist-2-c1", "java-grpc-datalist-2-c50", "java-grpc-datalist-200-c1", "java-grpc-datalist-200-c50",
		"php-ice-datatype-c1", "php-ice-datatype-c50", "php-ice-datalist-2-c1", "php-ice-datalist-2-c50", "php-ice-datalist-200-c1", "php-ice-datalist-200-c50",
		"java-ice-datatype-c1", "java-ice-datatype-c50", "java-ice-datalist-2-c1", "java-ice-datalist-2-c50", "java-ice-datalist-200-c1", "java-ice-datalist-200-c50",
		"java-dubbo-datatype-c1", "java-dubbo-datatype-c50", "java-dubbo-datalist-2-c1", "java-dubbo-datalist-2-c50", "java-dubbo-datalist-200-c1", "java-dubbo-datalist-200-c50",
	}, " ")
	if got != want {
		t.Errorf("plan:\ngot  %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		cell             string
		duration, warmup time.Duration
		server           string
	}{
		{"go-grpc-datalist-2-c50", time.Second, 500 * time.Millisecond, "go-server"},
		{"php-http-datalist-2-c1", 3 * time.Second, 500 * time.Millisecond, "go-server"},
		{"php-ice-datalist-2-c50", 3 * time.Second, 2 * time.Second, "java-ice"},
		{"java-dubbo-datatype-c1", time.Second, 500 * time.Millisecond, "java-dubbo"},
	} {
		var c Cell
		for _, x := range s.Plan() {
			if x.Name() == tc.cell {
				c = x
			}
		}
		if c.Load.Duration.D() != tc.duration || c.Load.Warmup.D() != tc.warmup || c.ServerProcKey() != tc.server {
			t.Errorf("%s: got duration %v warm-up %v server %s; want %v %v %s", tc.cell,
				c.Load.Duration.D(), c.Load.Warmup.D(), c.ServerProcKey(), tc.duration, tc.warmup, tc.server)
		}
	}
}
