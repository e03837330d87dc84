package measure

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/runner"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A cell's security (plan.Security) reaches a run in three places: the run's
// certificates (Certs: made once, under the run's directory, tls/ecdsa and
// tls/rsa), the servers of its group (StartServers: one per server variant,
// plaintext, tls, mtls, each with its key type, all started with the group so
// that the cells they serve are timed in the same rounds), and the client's
// flags (plan.Cell.ClientArgs, with the certificates ServerProc.ClientRun gives).
// The matrix and capacity both start their servers this way.

// Certs are a run's certificates by key type, under Dir.
type Certs struct {
	// Dir is absolute: it is bind-mounted into containers at the same path (a
	// relative -out failed every TLS server start on docker with "mount path
	// must be absolute").
	Dir   string
	files map[string]*tlsbed.Files
}

// NewCerts is the certificates of the run in runDir, in runDir/tls (none made yet).
func NewCerts(runDir string) *Certs {
	d := filepath.Join(runDir, "tls")
	if a, err := filepath.Abs(d); err == nil {
		d = a
	}
	return &Certs{Dir: d, files: map[string]*tlsbed.Files{}}
}

// Make makes the certificates of every key type cells ask, once each: a fresh
// CA and leaves (a resumed run makes new ones; its servers start again with them).
func (c *Certs) Make(cells []plan.Cell) error {
	for _, cell := range cells {
		s := cell.Sec()
		if !s.IsTLS() || c.files[s.KeyType()] != nil {
			continue
		}
		k := s.KeyType()
		f, err := tlsbed.Generate(filepath.Join(c.Dir, k), k, tlsbed.DefaultHosts)
		if err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
		c.files[k] = f
	}
	return nil
}

// Set is a key type's certificates (made elsewhere, e.g. a test's).
func (c *Certs) Set(keyType string, f *tlsbed.Files) { c.files[keyType] = f }

// Any says some certificates were made: the clients then mount Dir too.
func (c *Certs) Any() bool { return c != nil && len(c.files) > 0 }

// Mounts are the host directories a TLS program reads: Dir, when any were made.
func (c *Certs) Mounts() []string {
	if !c.Any() {
		return nil
	}
	return []string{c.Dir}
}

// ServerVariants are the servers cells need, plaintext ("") first.
func ServerVariants(cells []plan.Cell) []string {
	var vs []string
	for _, c := range cells {
		if v := c.Sec().ServerVariant(); !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	slices.Sort(vs)
	return vs
}

// ServerTLS is how the server of variant v is started for cells: its key type's
// certificates, client certificates for mtls, TLS 1.3 at least unless a cell
// asks 1.2.
func (c *Certs) ServerTLS(v string, cells []plan.Cell) *ServerTLS {
	s, _ := plan.ParseSecurity(v)
	t := &ServerTLS{Files: c.files[s.KeyType()], MTLS: s.Mode == plan.MTLS, Min: "1.3"}
	for _, cell := range cells {
		if cs := cell.Sec(); cs.ServerVariant() == v && cs.TLS12 {
			t.Min = "1.2"
		}
	}
	return t
}

// StartServers starts a group's servers, one per server variant of its cells
// (cfg for each, with the variant's TLS), and returns the first with the others
// as its twins (ServerProc.For). When one fails to start, those already started
// are stopped with stop.
func StartServers(ctx context.Context, r runner.Runner, key string, cfg ServerProcConfig, cells []plan.Cell, certs *Certs, stop func(*ServerProc)) (*ServerProc, error) {
	var first *ServerProc
	for _, v := range ServerVariants(cells) {
		vc := cfg
		if v != "" {
			vc.TLS = certs.ServerTLS(v, cells)
			vc.Mounts = []string{certs.Dir}
		}
		srv, err := StartServerProc(ctx, r, key, vc)
		if err != nil {
			if first != nil {
				stop(first)
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

// StopAll stops s's twins and then s, each once, handing each one's output to
// save with its key (e.g. to keep it under raw/).
func (s *ServerProc) StopAll(save func(key string, r runner.Result)) {
	if s == nil {
		return
	}
	for _, t := range s.Twins() {
		t.StopAll(save)
	}
	if s.Svc == nil {
		return
	}
	r, _ := s.Svc.Stop(context.Background())
	s.Svc = nil
	if save != nil {
		save(s.Key, r)
	}
}
