package javaserver_test

// Throwaway certificates for the TLS tests, made fresh per test with crypto/x509 and
// written as PEM files (ECDSA P-256, PKCS#8 keys): a CA, a server leaf for
// 127.0.0.1/localhost, a client leaf for mtls, and the three bad server leaves the
// clients must refuse (another CA, expired, another name).

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// certs is one test's files.
type certs struct {
	CA, Cert, Key               string // the CA, the server's leaf and key
	ClientCert, ClientKey       string // a client leaf of the same CA (mtls)
	OtherCA                     string // a CA that signed nothing here
	OtherCACert, OtherCAKey     string // a server leaf of OtherCA
	ExpiredCert, ExpiredKey     string // a server leaf of CA, expired an hour ago
	WrongNameCert, WrongNameKey string // a server leaf of CA for "elsewhere.invalid" only
}

type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(t *testing.T, dir, name string) (issuer, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	path := filepath.Join(dir, name+".pem")
	writePEM(t, path, "CERTIFICATE", der)
	return issuer{c, key}, path
}

// leaf writes a leaf of ca valid for names (DNS names or IPs) from notBefore to notAfter.
func (ca issuer) leaf(t *testing.T, dir, name string, names []string, notBefore, notAfter time.Time) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, kf := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	writePEM(t, cert, "CERTIFICATE", der)
	writePEM(t, kf, "PRIVATE KEY", kder)
	return cert, kf
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newCerts(t *testing.T) certs {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	ca, caFile := newCA(t, dir, "ca")
	other, otherFile := newCA(t, dir, "other-ca")
	local := []string{"127.0.0.1", "localhost"}
	var c certs
	c.CA, c.OtherCA = caFile, otherFile
	c.Cert, c.Key = ca.leaf(t, dir, "server", local, now.Add(-time.Hour), now.Add(24*time.Hour))
	c.ClientCert, c.ClientKey = ca.leaf(t, dir, "client", []string{"rpcbed-client"}, now.Add(-time.Hour), now.Add(24*time.Hour))
	c.OtherCACert, c.OtherCAKey = other.leaf(t, dir, "server-other-ca", local, now.Add(-time.Hour), now.Add(24*time.Hour))
	c.ExpiredCert, c.ExpiredKey = ca.leaf(t, dir, "server-expired", local, now.Add(-48*time.Hour), now.Add(-time.Hour))
	c.WrongNameCert, c.WrongNameKey = ca.leaf(t, dir, "server-wrong-name", []string{"elsewhere.invalid"}, now.Add(-time.Hour), now.Add(24*time.Hour))
	return c
}
