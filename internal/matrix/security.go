package matrix

import (
	"context"
	"fmt"
	"github.com/rpcbed/rpcbed/internal/measure"
	"path/filepath"
	"slices"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A cell's security (plan.Security) reaches the run in three places: the
// run's certificates (made once, under the run's directory: tls/ecdsa,
// tls/rsa), the servers of its group (one per server variant: plaintext, tls,
// mtls, each with its key type, all started with the group so that the cells
// they serve are timed in the same rounds), and the client's flags
// (plan.Cell.ClientArgs, with the certificates executor.clientRun gives).

// tlsDir is where a run keeps its certificates (never committed: .gitignore).
func tlsDir(runDir string) string {
	d := filepath.Join(runDir, "tls")
	// Absolute: the directory is bind-mounted into containers at the same path,
	// and a bind mount needs one (-out results/x gave a relative one).
	if a, err := filepath.Abs(d); err == nil {
		return a
	}
	return d
}

// makeCertificates makes the run's certificates for every key type its cells
// ask, once: a fresh CA and leaves per key type (a resumed run makes new ones;
// its servers start again with them).
func (e *executor) makeCertificates(cells []plan.Cell) error {
	for _, c := range cells {
		s := c.Sec()
		if !s.IsTLS() {
			continue
		}
		k := s.KeyType()
		if e.certs[k] != nil {
			continue
		}
		f, err := tlsbed.Generate(filepath.Join(tlsDir(e.o.Dir), k), k, tlsbed.DefaultHosts)
		if err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
		if e.certs == nil {
			e.certs = map[string]*tlsbed.Files{}
		}
		e.certs[k] = f
	}
	return nil
}

// serverVariants are the servers a group's cells need, plaintext ("") first.
func serverVariants(cells []plan.Cell) []string {
	var vs []string
	for _, c := range cells {
		if v := c.Sec().ServerVariant(); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// serverTLS is how the server of variant v is started for cells.
func (e *executor) serverTLS(v string, cells []plan.Cell) *measure.ServerTLS {
	s, _ := plan.ParseSecurity(v)
	t := &measure.ServerTLS{Files: e.certs[s.KeyType()], MTLS: s.Mode == plan.MTLS, Min: "1.3"}
	for _, c := range cells {
		if cs := c.Sec(); cs.ServerVariant() == v && cs.TLS12 {
			t.Min = "1.2"
		}
	}
	return t
}

// startServers starts a group's servers: one per server variant of its cells,
// the first returned with the others as its twins (measure.ServerProc.For).
func (e *executor) startServers(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	var first *measure.ServerProc
	for _, v := range serverVariants(cells) {
		cfg := e.serverConfig(key)
		if v != "" {
			cfg.TLS = e.serverTLS(v, cells)
			cfg.Mounts = []string{tlsDir(e.o.Dir)}
		}
		srv, err := measure.StartServerProc(ctx, e.serverRunner(key), key, cfg)
		if err != nil {
			if first != nil {
				e.stopServer(first)
			}
			if v != "" {
				err = fmt.Errorf("%s (%s): %w", key, v, err)
			}
			return nil, err
		}
		srv.Variant = v
		if v != "" {
			srv.Key = key + "+" + v
		}
		if first == nil {
			first = srv
			continue
		}
		first.AddTwin(srv)
	}
	return first, nil
}
