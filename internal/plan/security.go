package plan

import (
	"fmt"
	"slices"
	"strings"
)

// A cell's security and connection mode: the spec's security and connect lists.
//
// A security condition is a mode (plaintext, tls or mtls) and, after tls or
// mtls, variant tokens joined by "+": tls12 (TLS 1.2 in place of 1.3), rsa
// (RSA-2048 certificates in place of ECDSA P-256), resume / noresume (session
// resumption asked on or off; without either the client library's default).
// "tls+tls12+rsa" is one condition. A cell's name carries it after its link:
// go-grpc-datalist-200-c1@tls+tls12, php-http-datalist-200-c1@tls+percall.

// Security modes, in the order tables list them.
const (
	Plaintext = "plaintext"
	TLS       = "tls"
	MTLS      = "mtls"
)

// Connection modes: one connection per caller kept for the whole run, or a new
// connection (and with TLS a new handshake) for every call.
const (
	Persistent = "persistent"
	PerCall    = "per-call"
)

// SecurityModes and ConnectModes are the values the spec's lists take.
var (
	SecurityModes   = []string{Plaintext, TLS, MTLS}
	ConnectModes    = []string{Persistent, PerCall}
	SecurityVariant = []string{"tls12", "rsa", "resume", "noresume"}
)

// tlsSupports says which client x protocol pairs speak TLS (any of tls, mtls),
// and tlsServes which servers serve a protocol over TLS. A cell outside them is
// refused by name, never silently skipped.
var (
	tlsSupports = map[string][]string{
		"go":   {"grpc", "thrift", "http"},
		"php":  {"grpc", "thrift", "http", "ice"},
		"java": {"grpc", "thrift", "http", "ice", "dubbo"},
	}
	tlsServes = map[string][]string{
		"go":   {"grpc", "thrift", "http"},
		"java": {"grpc", "thrift", "http", "ice", "dubbo"},
	}
	// perCallSupports: the clients that open a connection per call (-connect per-call).
	perCallSupports = map[string][]string{
		"go":   {"grpc", "thrift", "http"},
		"php":  {"grpc", "thrift", "http", "ice"},
		"java": {"grpc", "thrift", "http", "ice", "dubbo"},
	}
	// tlsVariantRefusals: a client's protocols whose library cannot give a
	// variant (docs/clients.md): grpc.so takes no TLS version; no library
	// php-client uses resumes a session across the connections it opens; Dubbo
	// builds a new TLS context for every connection java-client opens.
	tlsVariantRefusals = map[string]map[string][]string{
		"php":  {"tls12": {"grpc"}, "resume": {"grpc", "thrift", "http", "ice"}},
		"java": {"resume": {"dubbo"}},
	}
)

// tlsClient is the name the tables above list a client under: a variant
// (php-pure) runs its base's program, so its base's row, on its own protocols.
func tlsClient(name string) string {
	if k, ok := ClientOf(name); ok && k.Base != "" {
		return k.Base
	}
	return name
}

// Security is a parsed security condition.
type Security struct {
	Mode string // plaintext, tls or mtls
	// TLS12 asks TLS 1.2 (default 1.3); RSA serves RSA-2048 certificates (default
	// ECDSA P-256); Resume is "on", "off" or "" (the client library's default).
	TLS12  bool
	RSA    bool
	Resume string
}

// ParseSecurity reads a condition such as "tls+tls12+rsa"; "" is plaintext.
func ParseSecurity(s string) (Security, error) {
	if s == "" || s == Plaintext {
		return Security{Mode: Plaintext}, nil
	}
	toks := strings.Split(s, "+")
	sec := Security{Mode: toks[0]}
	if sec.Mode != TLS && sec.Mode != MTLS {
		return Security{}, fmt.Errorf("%q: want plaintext, tls or mtls, then variants joined by + (%s)", s, strings.Join(SecurityVariant, ", "))
	}
	seen := map[string]bool{}
	for _, t := range toks[1:] {
		if seen[t] {
			return Security{}, fmt.Errorf("%q: %s twice", s, t)
		}
		seen[t] = true
		switch t {
		case "tls12":
			sec.TLS12 = true
		case "rsa":
			sec.RSA = true
		case "resume", "noresume":
			if sec.Resume != "" {
				return Security{}, fmt.Errorf("%q: resume and noresume both", s)
			}
			sec.Resume = map[string]string{"resume": "on", "noresume": "off"}[t]
		default:
			return Security{}, fmt.Errorf("%q: unknown variant %q: want %s", s, t, strings.Join(SecurityVariant, ", "))
		}
	}
	return sec, nil
}

// String is the condition's canonical form: the mode, then its variants in
// SecurityVariant's order (what a cell's name carries).
func (s Security) String() string {
	if s.Mode == "" || s.Mode == Plaintext {
		return Plaintext
	}
	toks := []string{s.Mode}
	if s.TLS12 {
		toks = append(toks, "tls12")
	}
	if s.RSA {
		toks = append(toks, "rsa")
	}
	switch s.Resume {
	case "on":
		toks = append(toks, "resume")
	case "off":
		toks = append(toks, "noresume")
	}
	return strings.Join(toks, "+")
}

// IsTLS reports whether the condition encrypts (tls or mtls).
func (s Security) IsTLS() bool { return s.Mode == TLS || s.Mode == MTLS }

// Version is the TLS version the client asks: "1.3" or "1.2".
func (s Security) Version() string {
	if s.TLS12 {
		return "1.2"
	}
	return "1.3"
}

// KeyType is the certificates' key: "ecdsa" (P-256) or "rsa" (2048 bits).
func (s Security) KeyType() string {
	if s.RSA {
		return "rsa"
	}
	return "ecdsa"
}

// ServerVariant is what a TLS server must be started with for the condition:
// the mode and the key type (a tls12 or resume variant is the client's ask, so
// one server serves them all). "" for plaintext.
func (s Security) ServerVariant() string {
	if !s.IsTLS() {
		return ""
	}
	return Security{Mode: s.Mode, RSA: s.RSA}.String()
}

// Sec is c's security condition, parsed ("" is plaintext; Validate has checked it).
func (c Cell) Sec() Security {
	s, _ := ParseSecurity(c.Security)
	return s
}

// SecurityMode is c's security: plaintext, tls or mtls with its variants.
func (c Cell) SecurityMode() string { return c.Sec().String() }

// ConnectMode is c's connection mode: persistent or per-call.
func (c Cell) ConnectMode() string {
	if c.Connect == "" {
		return Persistent
	}
	return c.Connect
}

// conditions are the name's tokens after "@": link, security, connection mode,
// each omitted at its default.
func (c Cell) conditions() []string {
	var t []string
	if c.Link != "" {
		t = append(t, c.Link)
	}
	if s := c.Sec(); s.IsTLS() {
		t = append(t, s.String())
	}
	if c.Connect == PerCall {
		t = append(t, "percall")
	}
	return t
}

// Plaintext is c with its security set to plaintext and everything else kept:
// the cell a tls cell is paired with.
func (c Cell) Plaintext() Cell {
	c.Security = ""
	return c
}

// SecurityList is the spec's security list, [plaintext] when it gives none.
func (s Spec) SecurityList() []string {
	if len(s.Security) == 0 {
		return []string{Plaintext}
	}
	return s.Security
}

// ConnectList is the spec's connect list, [persistent] when it gives none.
func (s Spec) ConnectList() []string {
	if len(s.Connect) == 0 {
		return []string{Persistent}
	}
	return s.Connect
}

// cellConditions are the (security, connect) pairs each cell point expands to,
// as a Cell holds them: plaintext and persistent as "".
func (s Spec) cellConditions() [][2]string {
	var out [][2]string
	for _, sec := range s.SecurityList() {
		p, _ := ParseSecurity(sec)
		v := p.String()
		if v == Plaintext {
			v = ""
		}
		for _, con := range s.ConnectList() {
			if con == Persistent {
				con = ""
			}
			out = append(out, [2]string{v, con})
		}
	}
	return out
}

// validateConditions checks the security and connect lists (before the plan).
func (s *Spec) validateConditions() error {
	if len(s.Security) > 0 || len(s.Connect) > 0 {
		// The certificates are files on the driver's machine: a client or
		// server on another host or a cluster node cannot read them yet.
		switch {
		case s.Cluster != nil:
			return fieldErr("security", "with a cluster: not supported yet (the run's certificates stay on the driver's machine)")
		case len(s.Hosts) > 0:
			return fieldErr("security", "with hosts: not supported yet (the run's certificates stay on the driver's machine)")
		}
	}
	seen := map[string]bool{}
	for i, v := range s.Security {
		p, err := ParseSecurity(v)
		if err != nil {
			return fieldErr(fmt.Sprintf("security[%d]", i), "%v", err)
		}
		if seen[p.String()] {
			return fieldErr(fmt.Sprintf("security[%d]", i), "%q listed twice", v)
		}
		seen[p.String()] = true
	}
	seen = map[string]bool{}
	for i, v := range s.Connect {
		if !slices.Contains(ConnectModes, v) {
			return fieldErr(fmt.Sprintf("connect[%d]", i), "%q: want persistent or per-call", v)
		}
		if seen[v] {
			return fieldErr(fmt.Sprintf("connect[%d]", i), "%q listed twice", v)
		}
		seen[v] = true
	}
	return nil
}

// validateCellConditions refuses, by name, a planned cell whose client,
// protocol or server cannot run its security or connection mode yet.
func validateCellConditions(c Cell) error {
	if c.Sec().IsTLS() {
		if !slices.Contains(tlsSupports[tlsClient(c.Client)], c.Protocol) {
			return fieldErr("security", "cell %s: %s-client does not speak TLS over %s (TLS: %s); exclude it (exclude: [%q])",
				c.Name(), c.Client, c.Protocol, supportList(tlsSupports), c.Name())
		}
		sec := c.Sec()
		for _, v := range []struct {
			name  string
			asked bool
		}{{"tls12", sec.TLS12}, {"resume", sec.Resume == "on"}} {
			if v.asked && slices.Contains(tlsVariantRefusals[tlsClient(c.Client)][v.name], c.Protocol) {
				return fieldErr("security", "cell %s: %s-client cannot give %s over %s (docs/clients.md); exclude it (exclude: [%q])",
					c.Name(), c.Client, v.name, c.Protocol, c.Name())
			}
		}
		if !slices.Contains(tlsServes[c.ServerLang], c.Protocol) {
			return fieldErr("security", "cell %s: the %s server does not serve %s over TLS (TLS: %s); exclude it (exclude: [%q])",
				c.Name(), c.ServerLang, c.Protocol, supportList(tlsServes), c.Name())
		}
	}
	if c.Connect == PerCall && !slices.Contains(perCallSupports[tlsClient(c.Client)], c.Protocol) {
		return fieldErr("connect", "cell %s: %s-client cannot open a connection per call over %s (per-call: %s); exclude it (exclude: [%q])",
			c.Name(), c.Client, c.Protocol, supportList(perCallSupports), c.Name())
	}
	return nil
}

// supportList prints a support table (clients, or servers by language): "go: grpc thrift http".
func supportList(m map[string][]string) string {
	var parts []string
	for _, k := range Clients {
		if len(m[k]) > 0 {
			parts = append(parts, k+": "+strings.Join(m[k], " "))
		}
	}
	return strings.Join(parts, "; ")
}
