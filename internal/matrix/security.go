package matrix

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A cell's security (plan.Security) reaches the run in three places: the
// run's certificates (made once, under the run's directory: tls/ecdsa,
// tls/rsa), the servers of its group (one per server variant: plaintext, tls,
// mtls, each with its key type, all started with the group so that the cells
// they serve are timed in the same rounds), and the client's flags
// (plan.Cell.ClientArgs, with the certificates executor.clientRun gives).

// ServerTLS is what a TLS server is started with: the -tls-* flags every
// server takes (go-server's and the Java baselines').
type ServerTLS struct {
	Files *tlsbed.Files
	// MTLS requires a client certificate signed by Files.CA.
	MTLS bool
	// Min is the lowest version served: "1.2" when a cell of the group asks
	// TLS 1.2, else "1.3".
	Min string
}

func (t *ServerTLS) args() []string {
	a := []string{"-tls-cert", t.Files.ServerCert, "-tls-key", t.Files.ServerKey, "-tls-min", t.Min}
	if t.MTLS {
		a = append(a, "-tls-client-ca", t.Files.CA)
	}
	return a
}

// client is the driver's own TLS client of the server (/healthz, /stats).
func (t *ServerTLS) client() (*http.Client, error) {
	c := tlsbed.Client{CACert: t.Files.CA}
	if t.MTLS {
		c.Cert, c.Key = t.Files.ClientCert, t.Files.ClientKey
	}
	cfg, err := c.Config("127.0.0.1")
	if err != nil {
		return nil, err
	}
	cfg.NextProtos = []string{"http/1.1"}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 2}}, nil
}

// tlsCheck is a ready check: GET url over TLS answers 2xx.
func tlsCheck(hc *http.Client, url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// tlsDir is where a run keeps its certificates (never committed: .gitignore).
func tlsDir(runDir string) string { return filepath.Join(runDir, "tls") }

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
func (e *executor) serverTLS(v string, cells []plan.Cell) *ServerTLS {
	s, _ := plan.ParseSecurity(v)
	t := &ServerTLS{Files: e.certs[s.KeyType()], MTLS: s.Mode == plan.MTLS, Min: "1.3"}
	for _, c := range cells {
		if cs := c.Sec(); cs.ServerVariant() == v && cs.TLS12 {
			t.Min = "1.2"
		}
	}
	return t
}

// startServers starts a group's servers: one per server variant of its cells,
// the first returned with the others as its twins (ServerProc.For).
func (e *executor) startServers(ctx context.Context, key string, cells []plan.Cell) (*ServerProc, error) {
	var first *ServerProc
	for _, v := range serverVariants(cells) {
		cfg := e.serverConfig(key)
		if v != "" {
			cfg.TLS = e.serverTLS(v, cells)
			cfg.Mounts = []string{tlsDir(e.o.Dir)}
		}
		srv, err := StartServerProc(ctx, e.serverRunner(key), key, cfg)
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
		if first.twins == nil {
			first.twins = map[string]*ServerProc{}
		}
		first.twins[v] = srv
	}
	return first, nil
}

// For is the server of s's group that serves c: s, or its twin of c's server
// variant.
func (s *ServerProc) For(c plan.Cell) *ServerProc {
	if s == nil {
		return nil
	}
	if v := c.Sec().ServerVariant(); v != s.Variant {
		if t := s.twins[v]; t != nil {
			return t
		}
	}
	return s
}

// ClientRun is what the command line of c's client (plan.Cell.ClientArgs) says
// of s for load l: the address of c's protocol on the server of s's group that
// serves c and, for a TLS cell, that server's certificates.
func (s *ServerProc) ClientRun(c plan.Cell, l plan.Load) plan.ClientRun {
	srv := s.For(c)
	r := plan.ClientRun{Load: l, Addr: srv.Addrs[c.Protocol]}
	if srv.TLS != nil {
		f := srv.TLS.Files
		r.CA, r.Cert, r.Key = f.CA, f.ClientCert, f.ClientKey
	}
	return r
}
