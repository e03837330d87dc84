package plan

import (
	"strings"
	"testing"
)

func TestCellNameConditions(t *testing.T) {
	base := Cell{Client: "go", Protocol: "grpc", Call: "datalist", Items: 200, Concurrency: 1}
	with := func(f func(*Cell)) Cell { c := base; f(&c); return c }
	for _, tc := range []struct {
		name string
		cell Cell
		want string
	}{
		{"defaults omitted", base, "go-grpc-datalist-200-c1"},
		{"plaintext spelt out is the default", with(func(c *Cell) { c.Security = "plaintext"; c.Connect = "persistent" }), "go-grpc-datalist-200-c1"},
		{"tls", with(func(c *Cell) { c.Security = "tls" }), "go-grpc-datalist-200-c1@tls"},
		{"tls per call", with(func(c *Cell) { c.Client = "php"; c.Protocol = "http"; c.Security = "tls"; c.Connect = PerCall }), "php-http-datalist-200-c1@tls+percall"},
		{"plaintext per call", with(func(c *Cell) { c.Connect = PerCall }), "go-grpc-datalist-200-c1@percall"},
		{"link then mtls", with(func(c *Cell) {
			c.Client = "java"
			c.Protocol = "thrift"
			c.Concurrency = 50
			c.Link = "lan"
			c.Security = "mtls"
		}), "java-thrift-datalist-200-c50@lan+mtls"},
		{"variants in canonical order", with(func(c *Cell) { c.Security = "tls+rsa+tls12" }), "go-grpc-datalist-200-c1@tls+tls12+rsa"},
		{"everything", with(func(c *Cell) { c.Link = "wan"; c.Security = "mtls+noresume"; c.Connect = PerCall }), "go-grpc-datalist-200-c1@wan+mtls+noresume+percall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cell.Name(); got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

func TestParseSecurity(t *testing.T) {
	for _, tc := range []struct {
		in, want, version, key, server string
		resume                         string
		err                            string
	}{
		{in: "", want: "plaintext", version: "1.3", key: "ecdsa"},
		{in: "tls", want: "tls", version: "1.3", key: "ecdsa", server: "tls"},
		{in: "mtls+tls12", want: "mtls+tls12", version: "1.2", key: "ecdsa", server: "mtls"},
		{in: "tls+rsa+tls12+resume", want: "tls+tls12+rsa+resume", version: "1.2", key: "rsa", server: "tls+rsa", resume: "on"},
		{in: "tls+noresume", want: "tls+noresume", version: "1.3", key: "ecdsa", server: "tls", resume: "off"},
		{in: "ssl", err: "want plaintext, tls or mtls"},
		{in: "plaintext+tls12", err: "want plaintext, tls or mtls"},
		{in: "tls+tls13", err: `unknown variant "tls13"`},
		{in: "tls+rsa+rsa", err: "rsa twice"},
		{in: "tls+resume+noresume", err: "resume and noresume both"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := ParseSecurity(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v; want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.String() != tc.want || s.Version() != tc.version || s.KeyType() != tc.key || s.ServerVariant() != tc.server || s.Resume != tc.resume {
				t.Errorf("got %s version %s key %s server %q resume %q; want %s %s %s %q %q",
					s, s.Version(), s.KeyType(), s.ServerVariant(), s.Resume, tc.want, tc.version, tc.key, tc.server, tc.resume)
			}
		})
	}
}

// Cells that differ only in security or connection mode sit side by side in one
// server group (so they are timed in the same rounds), and specs without the
// lists plan the cells they always did.
func TestPlanConditions(t *testing.T) {
	goTLS(t)
	s, err := ParseSpec([]byte(`
clients: {go: [grpc, http]}
items: [2, 200]
concurrency: [1]
security: [plaintext, tls+tls12]
connect: [persistent, per-call]
exclude: ["*-2-c*@*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	group := map[string]bool{}
	for _, c := range s.Plan() {
		names = append(names, c.Name())
		group[c.GroupKey()] = true
	}
	want := strings.Join([]string{
		"go-grpc-datalist-2-c1",
		"go-grpc-datalist-200-c1", "go-grpc-datalist-200-c1@percall", "go-grpc-datalist-200-c1@tls+tls12", "go-grpc-datalist-200-c1@tls+tls12+percall",
		"go-http-datalist-2-c1",
		"go-http-datalist-200-c1", "go-http-datalist-200-c1@percall", "go-http-datalist-200-c1@tls+tls12", "go-http-datalist-200-c1@tls+tls12+percall",
	}, " ")
	if got := strings.Join(names, " "); got != want {
		t.Errorf("plan:\ngot  %s\nwant %s", got, want)
	}
	if len(group) != 1 {
		t.Errorf("server groups %v; want one (go-server)", group)
	}
	pairs := map[string]string{}
	for _, c := range s.Plan() {
		if c.Sec().IsTLS() {
			pairs[c.Name()] = c.Plaintext().Name()
		}
	}
	if got := pairs["go-http-datalist-200-c1@tls+tls12+percall"]; got != "go-http-datalist-200-c1@percall" {
		t.Errorf("go-http-datalist-200-c1@tls+tls12+percall pairs with %q; want go-http-datalist-200-c1@percall", got)
	}
	if got := pairs["go-grpc-datalist-200-c1@tls+tls12"]; got != "go-grpc-datalist-200-c1" {
		t.Errorf("go-grpc-datalist-200-c1@tls+tls12 pairs with %q; want go-grpc-datalist-200-c1", got)
	}
	old, err := ParseSpec([]byte("clients: {go: [grpc]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := old.Plan(); len(p) != 1 || p[0].Name() != "go-grpc-datalist-200-c1" || p[0].Security != "" || p[0].Connect != "" {
		t.Errorf("a spec without security or connect: %+v; want go-grpc-datalist-200-c1, plaintext and persistent", p)
	}
	if b, _ := MarshalSpec(old); strings.Contains(string(b), "security") || strings.Contains(string(b), "connect") {
		t.Errorf("a spec without the lists saves them:\n%s", b)
	}
}

// goTLS sets the support tables to go-client and go-server over grpc, thrift
// and http for the test.
func goTLS(t *testing.T) {
	saved := [3]map[string][]string{tlsSupports, tlsServes, perCallSupports}
	t.Cleanup(func() { tlsSupports, tlsServes, perCallSupports = saved[0], saved[1], saved[2] })
	g := map[string][]string{"go": {"grpc", "thrift", "http"}}
	tlsSupports, tlsServes, perCallSupports = g, g, g
}

func TestValidateConditions(t *testing.T) {
	goTLS(t)
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"bad mode", "security: [plaintext, ssl]", `spec: security[1]: "ssl": want plaintext, tls or mtls`},
		{"bad variant", "security: [tls+tls11]", `spec: security[0]: "tls+tls11": unknown variant "tls11"`},
		{"twice", "security: [tls+rsa+tls12, tls+tls12+rsa]", `spec: security[1]: "tls+tls12+rsa" listed twice`},
		{"bad connect", "connect: [keepalive]", `spec: connect[0]: "keepalive": want persistent or per-call`},
		{"client without tls", "clients: {php: [grpc]}\nsecurity: [tls]",
			`spec: security: cell php-grpc-datalist-200-c1@tls: php-client does not speak TLS over grpc`},
		{"server without tls", "clients: {java: [ice]}\nsecurity: [mtls]",
			`spec: security: cell java-ice-datalist-200-c1@mtls: java-client does not speak TLS over ice`},
		{"java server", "clients: {go: [grpc]}\nservers: {grpc: java}\nsecurity: [tls]",
			`spec: security: cell go-grpc-datalist-200-c1@tls: the java server does not serve grpc over TLS`},
		{"per call", "clients: {java: [grpc]}\nconnect: [per-call]",
			`spec: connect: cell java-grpc-datalist-200-c1@percall: java-client cannot open a connection per call over grpc`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			if !strings.Contains(spec, "clients:") {
				spec = "clients: {go: [grpc]}\n" + spec
			}
			_, err := ParseSpec([]byte(spec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
	// Refused cells can be excluded by name.
	if _, err := ParseSpec([]byte("clients: {go: [grpc], php: [grpc]}\nsecurity: [plaintext, tls]\nexclude: [\"php-*@tls*\"]\n")); err != nil {
		t.Errorf("php's tls cells excluded: %v; want no error", err)
	}
}

// TestPHPConditions checks php's and php-pure's rows of the real tables: every
// protocol they speak over TLS and per call, and the variants their libraries
// cannot give refused by name.
func TestPHPConditions(t *testing.T) {
	ok := "clients: {php: [grpc, thrift, http, ice], php-pure: [grpc, thrift]}\nsecurity: [plaintext, tls, mtls, tls+tls12+rsa]\n" +
		"connect: [persistent, per-call]\nservers: {grpc: go, thrift: go, http: go, ice: java}\nexclude: [\"php-grpc-*@*tls12*\", \"php-pure-grpc-*@*tls12*\"]\n"
	if _, err := ParseSpec([]byte(ok)); err != nil {
		t.Errorf("php's TLS and per-call cells: %v; want no error", err)
	}
	for _, tc := range []struct {
		name, spec, want string
	}{
		{"grpc tls12", "clients: {php: [grpc]}\nsecurity: [tls+tls12]",
			`spec: security: cell php-grpc-datalist-200-c1@tls+tls12: php-client cannot give tls12 over grpc`},
		{"pure grpc tls12", "clients: {php-pure: [grpc]}\nsecurity: [tls+tls12]",
			`spec: security: cell php-pure-grpc-datalist-200-c1@tls+tls12: php-pure-client cannot give tls12 over grpc`},
		{"resume", "clients: {php: [thrift]}\nsecurity: [tls+resume]",
			`spec: security: cell php-thrift-datalist-200-c1@tls+resume: php-client cannot give resume over thrift`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec([]byte(tc.spec))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
	// noresume is what every php library does: accepted.
	if _, err := ParseSpec([]byte("clients: {php: [http]}\nsecurity: [tls+noresume]\n")); err != nil {
		t.Errorf("php tls+noresume: %v; want no error", err)
	}
}
