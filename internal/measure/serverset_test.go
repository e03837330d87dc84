package measure

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A group starts one server per variant its cells ask, plaintext first; a tls12
// cell lowers its variant's minimum, mtls asks client certificates.
func TestServerVariants(t *testing.T) {
	cell := func(sec, con string) plan.Cell {
		return plan.Cell{Client: "go", Protocol: "http", Call: "datalist", Items: 200, Concurrency: 1, Security: sec, Connect: con}
	}
	cells := []plan.Cell{cell("tls+rsa", ""), cell("", ""), cell("tls+tls12", ""), cell("mtls", plan.PerCall), cell("tls", "")}
	if got, want := ServerVariants(cells), []string{"", "mtls", "tls", "tls+rsa"}; !slices.Equal(got, want) {
		t.Errorf("server variants %q; want %q", got, want)
	}
	c := NewCerts("/r")
	c.Set("ecdsa", &tlsbed.Files{CA: "/r/tls/ecdsa/ca.pem"})
	if got := c.ServerTLS("tls", cells); got.Min != "1.2" || got.MTLS || got.Files == nil {
		t.Errorf("tls server: min %s mtls %v files %v; want 1.2 (a tls12 cell), no client certificates, ecdsa's files", got.Min, got.MTLS, got.Files)
	}
	if got := c.ServerTLS("mtls", cells); got.Min != "1.3" || !got.MTLS {
		t.Errorf("mtls server: min %s mtls %v; want 1.3 and client certificates", got.Min, got.MTLS)
	}
	if got := ServerVariants([]plan.Cell{cell("", "")}); !slices.Equal(got, []string{""}) {
		t.Errorf("plaintext only: %q; want one plaintext server", got)
	}
}

// The certificates' directory is absolute whatever -out was: it is bind-mounted
// into containers at the same path (a relative -out failed every TLS server start
// on docker with "mount path must be absolute"); it is mounted only once made.
func TestCertsDirIsAbsolute(t *testing.T) {
	for _, dir := range []string{"results/x", "./x", "/tmp/x"} {
		c := NewCerts(dir)
		if !filepath.IsAbs(c.Dir) || filepath.Base(c.Dir) != "tls" {
			t.Errorf("NewCerts(%q).Dir = %q; want an absolute path ending in tls", dir, c.Dir)
		}
		if c.Any() || c.Mounts() != nil {
			t.Errorf("no certificates made, yet Any %v, Mounts %q", c.Any(), c.Mounts())
		}
	}
	c := NewCerts(t.TempDir())
	if err := c.Make([]plan.Cell{{Client: "go", Protocol: "grpc", Call: "datalist", Items: 2, Concurrency: 1, Security: "tls"}}); err != nil {
		t.Fatal(err)
	}
	if !c.Any() || len(c.Mounts()) != 1 || c.ServerTLS("tls", nil).Files == nil {
		t.Errorf("after Make: Any %v Mounts %q; want the directory mounted and ecdsa's files", c.Any(), c.Mounts())
	}
}
