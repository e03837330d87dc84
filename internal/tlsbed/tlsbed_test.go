package tlsbed

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"os"
	"strings"
	"testing"
)

// serve accepts TLS connections with cfg until the listener closes, completing
// each handshake and echoing one byte.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 1)
				if _, err := io.ReadFull(c, b); err == nil {
					c.Write(b)
				}
			}()
		}
	}()
	return l.Addr().String()
}

func dial(addr string, c Client) (tls.ConnectionState, error) {
	cfg, err := c.Config("127.0.0.1")
	if err != nil {
		return tls.ConnectionState{}, err
	}
	conn, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{1}); err != nil {
		return tls.ConnectionState{}, err
	}
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
		return tls.ConnectionState{}, err
	}
	return conn.ConnectionState(), nil
}

func TestGenerateKeysAndHandshakes(t *testing.T) {
	for _, tc := range []struct {
		key, version string
		wantVersion  uint16
		mtls         bool
	}{
		{ECDSA, "1.3", tls.VersionTLS13, false},
		{ECDSA, "1.2", tls.VersionTLS12, true},
		{RSA, "1.3", tls.VersionTLS13, true},
		{RSA, "1.2", tls.VersionTLS12, false},
	} {
		t.Run(tc.key+"-"+tc.version, func(t *testing.T) {
			f, err := Generate(t.TempDir(), tc.key, DefaultHosts)
			if err != nil {
				t.Fatal(err)
			}
			clientCA := ""
			if tc.mtls {
				clientCA = f.CA
			}
			scfg, err := ServerConfig(f.ServerCert, f.ServerKey, clientCA, "1.2")
			if err != nil {
				t.Fatal(err)
			}
			addr := serve(t, scfg)
			c := Client{CACert: f.CA, Version: tc.version}
			if tc.mtls {
				if _, err := dial(addr, c); err == nil {
					t.Fatal("mtls without a client certificate: handshake done; want refused")
				}
				c.Cert, c.Key = f.ClientCert, f.ClientKey
			}
			st, err := dial(addr, c)
			if err != nil {
				t.Fatal(err)
			}
			if st.Version != tc.wantVersion {
				t.Errorf("negotiated %s; want %s", VersionName(st.Version), VersionName(tc.wantVersion))
			}
			leaf := st.PeerCertificates[0]
			if got := map[bool]string{true: RSA, false: ECDSA}[leaf.PublicKeyAlgorithm == x509.RSA]; got != tc.key {
				t.Errorf("server key %s; want %s", got, tc.key)
			}
		})
	}
}

// A certificate a client must refuse is refused, and Cause names why.
func TestBadCertificates(t *testing.T) {
	dir := t.TempDir()
	f, bad, err := GenerateBad(dir, DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files [2]string
		want  string
	}{
		{"good", [2]string{f.ServerCert, f.ServerKey}, ""},
		{"wrong CA", bad.WrongCA, "unknown CA"},
		{"expired", bad.Expired, "expired certificate"},
		{"wrong name", bad.WrongName, "wrong name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scfg, err := ServerConfig(tc.files[0], tc.files[1], "", "")
			if err != nil {
				t.Fatal(err)
			}
			_, err = dial(serve(t, scfg), Client{CACert: f.CA})
			if got := Cause(err); got != tc.want || (tc.want == "") != (err == nil) {
				t.Errorf("cause %q (%v); want %q", got, err, tc.want)
			}
		})
	}
	t.Run("client certificate refused", func(t *testing.T) {
		other, err := Generate(t.TempDir(), ECDSA, DefaultHosts)
		if err != nil {
			t.Fatal(err)
		}
		scfg, err := ServerConfig(f.ServerCert, f.ServerKey, f.CA, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = dial(serve(t, scfg), Client{CACert: f.CA, Cert: other.ClientCert, Key: other.ClientKey})
		if got := Cause(err); got != "client certificate refused" {
			t.Errorf("cause %q (%v); want client certificate refused", got, err)
		}
	})
}

// The CA's key never reaches the disk: only certificates and leaf keys do.
func TestNoCAKeyOnDisk(t *testing.T) {
	dir := t.TempDir()
	if _, err := Generate(dir, ECDSA, DefaultHosts); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var keys int
	for _, e := range ents {
		b, _ := os.ReadFile(dir + "/" + e.Name())
		blk, _ := pem.Decode(b)
		if blk == nil {
			t.Fatalf("%s: no PEM", e.Name())
		}
		if blk.Type == "PRIVATE KEY" {
			keys++
		}
	}
	if len(ents) != 5 || keys != 2 {
		t.Errorf("%d files, %d keys; want 5 files (CA, server and client leaves), 2 keys", len(ents), keys)
	}
}

func TestFlagErrors(t *testing.T) {
	f, err := Generate(t.TempDir(), ECDSA, DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    Client
		want string
	}{
		{"no CA", Client{}, "-cacert: TLS needs the CA"},
		{"missing CA", Client{CACert: "/nonexistent.pem"}, "-cacert: open /nonexistent.pem"},
		{"not PEM", Client{CACert: f.ServerKey + "x"}, "-cacert"},
		{"bad version", Client{CACert: f.CA, Version: "1.1"}, `-tls-version: "1.1": want 1.3 or 1.2`},
		{"cert without key", Client{CACert: f.CA, Cert: f.ClientCert}, "-cert and -key: give both"},
		{"bad resume", Client{CACert: f.CA, Resume: "yes"}, `-resume: "yes"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.Config("127.0.0.1")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
	if _, err := ServerConfig(f.ServerCert, f.ServerKey, "", "1.4"); err == nil || !strings.Contains(err.Error(), "-tls-min") {
		t.Errorf("-tls-min 1.4: got %v; want an error naming -tls-min", err)
	}
}
