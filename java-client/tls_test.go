package javaclient_test

// java-client over TLS: each protocol (grpc, thrift, http, ice, dubbo) against the Java
// baseline serving TLS with a fresh CA (internal/tlsbed), tls and mtls, persistent and
// per-call; the report parses with its TLS line; and the rows every client must refuse:
// a server certificate of another CA, an expired one, one of another name, and an mtls
// server refusing a client without a certificate, each exit 3 naming the cause.

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/testbed"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

var javaTLSProtos = []string{"grpc", "thrift", "http", "ice", "dubbo"}

func TestJavaClientTLS(t *testing.T) {
	java := testbed.NeedJava(t)
	files, bad, err := tlsbed.GenerateBad(t.TempDir(), []string{"127.0.0.1", "localhost"})
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range javaTLSProtos {
		t.Run(proto, func(t *testing.T) {
			start := func(cert, key string, extra ...string) string {
				_, addrs := testbed.JavaBaseline(t, java, proto, append([]string{"-tls-cert", cert, "-tls-key", key}, extra...)...)
				return addrs[proto]
			}
			good := start(files.ServerCert, files.ServerKey, "-tls-client-ca", files.CA, "-tls-min", "1.2")
			run := func(addr string, extra ...string) (int, []byte, string) {
				args := append([]string{"-proto", proto, "-call", "datalist", "-items", "20", "-c", "2", "-n", "40",
					"-timeout", "30s", "-addr", addr, "-cacert", files.CA}, extra...)
				return javaClient(t, java, args...)
			}
			mtls := []string{"-security", "mtls", "-cert", files.ClientCert, "-key", files.ClientKey}
			perCall := []string{"-connect", "per-call"}
			for _, tc := range []struct {
				name    string
				args    []string
				version string
			}{
				{"mtls", mtls, "TLSv1.3"},
				{"mtls tls12", append([]string{"-tls-version", "1.2"}, mtls...), "TLSv1.2"},
				{"mtls per-call", append(perCall, mtls...), "TLSv1.3"},
				{"mtls per-call resume off", append([]string{"-resume", "off"}, append(perCall, mtls...)...), "TLSv1.3"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					code, out, stderr := run(good, tc.args...)
					if code != 0 {
						t.Fatalf("exit %d; want 0; stderr:\n%s", code, testbed.Tail(stderr, 2000))
					}
					r, err := report.Parse(bytes.NewReader(out))
					if err != nil {
						t.Fatalf("report: %v\n%s", err, out)
					}
					if r.Complete != 40 || r.Failed != 0 {
						t.Errorf("complete %d, failed %d; want 40, 0", r.Complete, r.Failed)
					}
					x := r.Rpcbed
					if x == nil || x.TLS == nil {
						t.Fatalf("no TLS line in the report:\n%s", out)
					}
					want := map[string]string{"grpc": "h2", "thrift": "none", "http": "none", "ice": "none", "dubbo": "none"}[proto]
					if x.TLS.Version != tc.version || x.TLS.ALPN != want || x.TLS.CipherSuite == "-" || x.TLS.Group != "-" {
						t.Errorf("TLS %+v; want %s, a cipher suite, group -, ALPN %s", *x.TLS, tc.version, want)
					}
					if strings.Contains(tc.name, "per-call") {
						// Every call of the window opened its connection and made its handshake.
						if x.ConnectionsOpened == nil {
							t.Errorf("no Connections opened line in a per-call report:\n%s", out)
						} else if *x.ConnectionsOpened != 40 || x.TLS.Handshakes != 40 {
							t.Errorf("connections opened %d, TLS handshakes %d; want 40, 40", *x.ConnectionsOpened, x.TLS.Handshakes)
						}
						if strings.Contains(tc.name, "resume off") && x.TLS.Resumed != 0 {
							t.Errorf("resumed %d with -resume off; want 0", x.TLS.Resumed)
						}
					} else if x.ConnectionsOpened != nil {
						t.Errorf("a persistent run's report says connections opened %d; want no line", *x.ConnectionsOpened)
					}
					var w bytes.Buffer
					if err := report.Write(&w, r); err != nil || !bytes.Equal(w.Bytes(), out) {
						t.Errorf("report.Write of the parsed report differs from java-client's output (%v)", err)
					}
				})
			}
			t.Run("mtls without a client certificate", func(t *testing.T) {
				code, _, stderr := run(good, "-security", "tls")
				wantCertificate(t, code, stderr, "client certificate refused")
			})
			for _, b := range []struct {
				name, cause string
				files       [2]string
			}{
				{"another CA", "unknown CA", bad.WrongCA},
				{"expired", "expired certificate", bad.Expired},
				{"wrong name", "wrong name", bad.WrongName},
			} {
				t.Run(b.name, func(t *testing.T) {
					addr := start(b.files[0], b.files[1])
					code, _, stderr := run(addr, "-security", "tls")
					wantCertificate(t, code, stderr, b.cause)
				})
			}
		})
	}
}

func wantCertificate(t *testing.T, code int, stderr, cause string) {
	t.Helper()
	if code != 3 || !strings.Contains(stderr, "verify: certificate: "+cause+": ") {
		t.Errorf("exit %d; want 3 with \"verify: certificate: %s: \" on stderr; stderr:\n%s", code, cause, testbed.Tail(stderr, 1500))
	}
}
