package load

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/report"
	"github.com/rpcbed/rpcbed/internal/testbed"
	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// tlsServer starts the in-process go-server serving TLS (client certificates
// required with mtls), and returns its addresses and certificates.
func tlsServer(t *testing.T, mtls bool, minVersion string) (map[string]string, *tlsbed.Files) {
	t.Helper()
	f, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	ca := ""
	if mtls {
		ca = f.CA
	}
	cfg, err := tlsbed.ServerConfig(f.ServerCert, f.ServerKey, ca, minVersion)
	if err != nil {
		t.Fatal(err)
	}
	return testbed.InProcessTLS(t, cfg), f
}

// Every protocol over TLS and mtls, persistent and per call: the report states
// the negotiated version, suite, group and ALPN, counts the window's handshakes
// (one per call per call, none after the start when persistent) and, per call,
// the connections opened; resumption resumes when asked.
func TestRunTLS(t *testing.T) {
	for _, mtls := range []bool{false, true} {
		addrs, f := tlsServer(t, mtls, "1.2")
		for _, p := range protos {
			for _, tc := range []struct {
				name, connect, version, resume string
				wantVersion                    string
			}{
				{"persistent", ConnectPersistent, "", "", "TLSv1.3"},
				{"per-call", ConnectPerCall, "", "", "TLSv1.3"},
				{"per-call-tls12-resume", ConnectPerCall, "1.2", "on", "TLSv1.2"},
				{"per-call-resume", ConnectPerCall, "", "on", "TLSv1.3"},
			} {
				sec := map[bool]string{false: SecTLS, true: SecMTLS}[mtls]
				t.Run(p+"-"+sec+"-"+tc.name, func(t *testing.T) {
					cfg := Config{Proto: p, Call: CallDataList, Items: 20, Concurrency: 2, Requests: 60, KeepAlive: true, Addr: addrs[p],
						Security: sec, Connect: tc.connect, TLS: tlsbed.Client{CACert: f.CA, Version: tc.version, Resume: tc.resume}}
					if mtls {
						cfg.TLS.Cert, cfg.TLS.Key = f.ClientCert, f.ClientKey
					}
					res, err := Run(context.Background(), cfg, io.Discard)
					if err != nil {
						t.Fatal(err)
					}
					if res.Failed != 0 {
						t.Fatalf("%d failed calls: %v", res.Failed, res.Errors())
					}
					rep := res.Report()
					x := rep.Rpcbed
					if x.TLS == nil {
						t.Fatal("no TLS line")
					}
					wantALPN := map[string]string{ProtoGRPC: "h2", ProtoHTTP: "http/1.1", ProtoThrift: "none"}[p]
					if x.TLS.Version != tc.wantVersion || x.TLS.ALPN != wantALPN || x.TLS.CipherSuite == "-" || x.TLS.Group == "-" {
						t.Errorf("TLS %+v; want %s, ALPN %s, a suite and a group", *x.TLS, tc.wantVersion, wantALPN)
					}
					switch tc.connect {
					case ConnectPersistent:
						if x.TLS.Handshakes != 0 || x.ConnectionsOpened != nil {
							t.Errorf("persistent: %d handshakes in the window, connections opened %v; want 0 and no line", x.TLS.Handshakes, x.ConnectionsOpened)
						}
					case ConnectPerCall:
						if x.ConnectionsOpened == nil || *x.ConnectionsOpened != rep.Complete || x.TLS.Handshakes != rep.Complete {
							t.Errorf("per call: %v connections opened, %d handshakes; want %d each", x.ConnectionsOpened, x.TLS.Handshakes, rep.Complete)
						}
						if rep.KeepAlive != 0 {
							t.Errorf("per call: %d keep-alive requests; want 0", rep.KeepAlive)
						}
						if tc.resume == "on" && x.TLS.Resumed < x.TLS.Handshakes*9/10 {
							t.Errorf("-resume on: %d of %d handshakes resumed; want nearly all", x.TLS.Resumed, x.TLS.Handshakes)
						}
						if tc.resume == "" && x.TLS.Resumed != 0 {
							t.Errorf("crypto/tls's default (no session cache): %d of %d resumed; want 0", x.TLS.Resumed, x.TLS.Handshakes)
						}
					}
					// The report round-trips through the parser with its TLS lines.
					var b bytes.Buffer
					if err := report.Write(&b, rep); err != nil {
						t.Fatal(err)
					}
					back, err := report.Parse(&b)
					if err != nil {
						t.Fatalf("parse: %v\n%s", err, b.String())
					}
					if *back.Rpcbed.TLS != *x.TLS {
						t.Errorf("parsed TLS %+v; want %+v", *back.Rpcbed.TLS, *x.TLS)
					}
				})
			}
		}
	}
}

// A certificate the client must refuse (another CA, expired, another name) is
// exit 3, kind certificate, with the cause named, on every protocol; and mtls
// without a certificate the server trusts likewise.
func TestRunTLSCertificateErrors(t *testing.T) {
	dir := t.TempDir()
	f, bad, err := tlsbed.GenerateBad(dir, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files [2]string
		cause string
	}{
		{"wrong CA", bad.WrongCA, "unknown CA"},
		{"expired", bad.Expired, "expired certificate"},
		{"wrong name", bad.WrongName, "wrong name"},
	} {
		scfg, err := tlsbed.ServerConfig(tc.files[0], tc.files[1], "", "")
		if err != nil {
			t.Fatal(err)
		}
		addrs := testbed.InProcessTLS(t, scfg)
		for _, p := range protos {
			t.Run(tc.name+"-"+p, func(t *testing.T) {
				cfg := Config{Proto: p, Call: CallDataType, Concurrency: 1, Requests: 5, Addr: addrs[p], Security: SecTLS, TLS: tlsbed.Client{CACert: f.CA}}
				_, err := Run(context.Background(), cfg, io.Discard)
				var ee *ExitError
				if !errors.As(err, &ee) || ee.Code != report.ExitVerify || ee.Kind != "certificate" || !strings.Contains(ee.Error(), tc.cause) {
					t.Errorf("got %v; want exit 3, kind certificate, naming %q", err, tc.cause)
				}
			})
		}
	}
	other, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	addrs, good := tlsServer(t, true, "")
	for _, p := range protos {
		t.Run("client certificate refused-"+p, func(t *testing.T) {
			cfg := Config{Proto: p, Call: CallDataType, Concurrency: 1, Requests: 5, Addr: addrs[p], Security: SecMTLS,
				TLS: tlsbed.Client{CACert: good.CA, Cert: other.ClientCert, Key: other.ClientKey}}
			_, err := Run(context.Background(), cfg, io.Discard)
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != report.ExitVerify || !strings.Contains(ee.Error(), "client certificate refused") {
				t.Errorf("got %v; want exit 3 naming the refused client certificate", err)
			}
		})
	}
}

func TestSecurityFlags(t *testing.T) {
	base := []string{"-proto", "grpc", "-call", "datatype", "-n", "1", "-addr", "127.0.0.1:1"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad security", []string{"-security", "ssl"}, `-security "ssl": want plaintext, tls or mtls`},
		{"bad connect", []string{"-connect", "pooled"}, `-connect "pooled": want persistent or per-call`},
		{"tls flags without tls", []string{"-cacert", "ca.pem"}, "need -security tls or mtls"},
		{"tls without CA", []string{"-security", "tls"}, "-cacert: TLS needs the CA"},
		{"mtls without cert", []string{"-security", "mtls", "-cacert", "ca.pem"}, "-security mtls: give the client's certificate"},
		{"cert with tls", []string{"-security", "tls", "-cacert", "ca.pem", "-cert", "c.pem", "-key", "k.pem"}, "-cert and -key are for -security mtls"},
		{"per-call open loop", []string{"-connect", "per-call", "-rate", "100"}, "-connect per-call: closed loop only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseArgs(append(append([]string{}, base...), tc.args...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
}
