package measure

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/rpcbed/rpcbed/internal/plan"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// A TLS server: its flags, the driver's own client of it, the server of a
// group that serves a cell's security, and what a cell's client is told of it.

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

// AddTwin makes t, a server of another variant started for the same group,
// s's twin (For).
func (s *ServerProc) AddTwin(t *ServerProc) {
	if s.twins == nil {
		s.twins = map[string]*ServerProc{}
	}
	s.twins[t.Variant] = t
}

// Twins are s's twins, by variant.
func (s *ServerProc) Twins() []*ServerProc {
	var out []*ServerProc
	for _, v := range slices.Sorted(maps.Keys(s.twins)) {
		out = append(out, s.twins[v])
	}
	return out
}
