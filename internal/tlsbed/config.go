package tlsbed

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Version reads a version flag: "1.3" or "1.2".
func Version(v string) (uint16, error) {
	switch v {
	case "1.3", "":
		return tls.VersionTLS13, nil
	case "1.2":
		return tls.VersionTLS12, nil
	}
	return 0, fmt.Errorf("%q: want 1.3 or 1.2", v)
}

// VersionName is a negotiated version as the report prints it: TLSv1.3.
func VersionName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1.0"
	}
	return fmt.Sprintf("0x%04x", v)
}

// ServerConfig is go-server's TLS: its leaf (certFile, keyFile), the lowest
// version it accepts (minVersion, default 1.3), and with clientCA a client
// certificate signed by it required on every connection (mtls). Session
// tickets stay on (crypto/tls's default), so a client that keeps its sessions
// resumes. The caller sets NextProtos (ALPN) per listener.
func ServerConfig(certFile, keyFile, clientCA, minVersion string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert/-tls-key: %w", err)
	}
	v, err := Version(minVersion)
	if err != nil {
		return nil, fmt.Errorf("-tls-min: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: v}
	if clientCA != "" {
		pool, err := loadPool(clientCA)
		if err != nil {
			return nil, fmt.Errorf("-tls-client-ca: %w", err)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// Client is a client's TLS flags (go-client, php-client and java-client take the
// same ones).
type Client struct {
	CACert, Cert, Key string
	// ServerName is the name the server's certificate must carry (default: the
	// host of -addr).
	ServerName string
	// Version is the highest version asked: 1.3 (default) or 1.2.
	Version string
	// Resume: "on" keeps sessions for resumption (an LRU session cache), "off"
	// or "" (crypto/tls's default: no session cache, so no resumption) does not.
	Resume string
}

// ResumeDefault is what crypto/tls does when a client gives no session cache:
// it does not resume (tls.Config.ClientSessionCache nil).
const ResumeDefault = "off"

// Config is the client's crypto/tls configuration, for host when ServerName is
// empty.
func (c Client) Config(host string) (*tls.Config, error) {
	if c.CACert == "" {
		return nil, errors.New("-cacert: TLS needs the CA that signed the server's certificate")
	}
	pool, err := loadPool(c.CACert)
	if err != nil {
		return nil, fmt.Errorf("-cacert: %w", err)
	}
	v, err := Version(c.Version)
	if err != nil {
		return nil, fmt.Errorf("-tls-version: %w", err)
	}
	cfg := &tls.Config{RootCAs: pool, ServerName: c.ServerName, MinVersion: tls.VersionTLS12, MaxVersion: v}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("-cert and -key: give both (mtls) or neither")
	}
	if c.Cert != "" {
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("-cert/-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	switch c.Resume {
	case "on":
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	case "off", "":
	default:
		return nil, fmt.Errorf("-resume: %q: want on or off", c.Resume)
	}
	return cfg, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}

// Cause names a certificate problem in err: "unknown CA", "expired certificate",
// "wrong name" (the server's certificate as the client checked it), or
// "client certificate refused" (the server refused ours); "" when err is none
// of them.
func Cause(err error) string {
	if err == nil {
		return ""
	}
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var he x509.HostnameError
	switch {
	case errors.As(err, &ua):
		return "unknown CA"
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		return "expired certificate"
	case errors.As(err, &ci):
		return "invalid certificate"
	case errors.As(err, &he):
		return "wrong name"
	}
	// Errors that crossed a library's boundary as text (grpc-go wraps the
	// handshake's error in a status message).
	msg := err.Error()
	for _, m := range []struct{ text, cause string }{
		{"certificate signed by unknown authority", "unknown CA"},
		{"certificate has expired or is not yet valid", "expired certificate"},
		{"certificate is valid for", "wrong name"},
		{"certificate is not valid for any names", "wrong name"},
		{"tls: certificate required", "client certificate refused"},
		{"tls: bad certificate", "client certificate refused"},
		{"tls: unknown certificate authority", "client certificate refused"},
	} {
		if strings.Contains(msg, m.text) {
			return m.cause
		}
	}
	return ""
}
