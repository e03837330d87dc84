package matrix

import (
	"github.com/rpcbed/rpcbed/internal/measure"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A cell's security and connection mode reach its client's flags and pick the
// server of its variant; a group starts one server per variant, plaintext first.
func TestSecurityArgs(t *testing.T) {
	f := &tlsbed.Files{CA: "/r/tls/ecdsa/ca.pem", ClientCert: "/r/tls/ecdsa/client.pem", ClientKey: "/r/tls/ecdsa/client-key.pem"}
	addrs := map[string]string{"http": "127.0.0.1:1"}
	plain := &measure.ServerProc{Key: "go-server", Addrs: addrs}
	tls := &measure.ServerProc{Key: "go-server+tls", Variant: "tls", TLS: &measure.ServerTLS{Files: f}, Addrs: addrs}
	mtls := &measure.ServerProc{Key: "go-server+mtls", Variant: "mtls", TLS: &measure.ServerTLS{Files: f, MTLS: true}, Addrs: addrs}
	plain.AddTwin(tls)
	plain.AddTwin(mtls)
	cell := func(sec, con string) plan.Cell {
		return plan.Cell{Client: "go", Protocol: "http", Call: "datalist", Items: 200, Concurrency: 1, Security: sec, Connect: con}
	}
	for _, tc := range []struct {
		c      plan.Cell
		server string
		want   string
	}{
		{cell("", ""), "go-server", "-conns 1 -k"},
		{cell("", plan.PerCall), "go-server", "-connect per-call"},
		{cell("tls", ""), "go-server+tls", "-security tls -cacert /r/tls/ecdsa/ca.pem"},
		{cell("tls+tls12+resume", plan.PerCall), "go-server+tls", "-security tls -cacert /r/tls/ecdsa/ca.pem -tls-version 1.2 -resume on"},
		{cell("mtls", ""), "go-server+mtls", "-security mtls -cacert /r/tls/ecdsa/ca.pem -cert /r/tls/ecdsa/client.pem -key /r/tls/ecdsa/client-key.pem"},
	} {
		t.Run(tc.c.Name(), func(t *testing.T) {
			srv := plain.For(tc.c)
			if srv.Key != tc.server {
				t.Errorf("server %s; want %s", srv.Key, tc.server)
			}
			args := tc.c.ClientArgs((&executor{}).clientRun(plain, tc.c, plan.Load{N: 10}))
			got := strings.Join(args, " ")
			if i := strings.Index(got, "-addr 127.0.0.1:1"); i < 0 || !strings.Contains(got, tc.want) {
				t.Errorf("args %q; want them to hold %q", got, tc.want)
			}
			if perCall := tc.c.Connect == plan.PerCall; perCall == strings.Contains(got, " -k") || perCall != strings.Contains(got, "-connect per-call") {
				t.Errorf("args %q: want -connect per-call and no -k per call, -k and no -connect otherwise", got)
			}
		})
	}
}
