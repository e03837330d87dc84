// Package tlsbed makes the certificates a run serves TLS with: a throwaway CA
// and its leaf certificates, generated for each run under the run's directory
// and never committed, plus deliberately bad ones for tests (another CA,
// expired, another name). It also builds the crypto/tls configurations of
// go-server and go-client from the shared flags, and names the cause of a
// certificate failure.
package tlsbed

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Key types: ECDSA P-256 (the default) and RSA-2048 (the rsa variant).
const (
	ECDSA = "ecdsa"
	RSA   = "rsa"
)

// Validity of the generated certificates: a run's certificates outlive any run.
const validity = 7 * 24 * time.Hour

// Files are a certificate set's PEM files.
type Files struct {
	Dir string
	// CA signs every leaf: clients trust it (-cacert), servers check client
	// certificates against it (-tls-client-ca).
	CA string
	// ServerCert/ServerKey: the server's leaf, named for the hosts given.
	ServerCert, ServerKey string
	// ClientCert/ClientKey: a client's leaf for mtls.
	ClientCert, ClientKey string
}

// Bad are server leaves a client must refuse, each a cert and key file.
type Bad struct {
	// WrongCA is signed by a CA the client does not trust.
	WrongCA [2]string
	// Expired ran out an hour ago (signed by the good CA).
	Expired [2]string
	// WrongName names another host (signed by the good CA).
	WrongName [2]string
}

// Generate writes a fresh CA, a server leaf for hosts (DNS names or IPs) and a
// client leaf into dir, with keys of keyType (ECDSA or RSA).
func Generate(dir, keyType string, hosts []string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ca, err := newCA("rpcbed throwaway CA", keyType)
	if err != nil {
		return nil, err
	}
	f := &Files{Dir: dir, CA: filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem")}
	if err := writePEM(f.CA, "CERTIFICATE", ca.der); err != nil {
		return nil, err
	}
	now := time.Now()
	if err := ca.leaf(f.ServerCert, f.ServerKey, keyType, "rpcbed server", hosts, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	if err := ca.leaf(f.ClientCert, f.ClientKey, keyType, "rpcbed client", nil, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	return f, nil
}

// GenerateBad writes, beside f, the server leaves a client trusting f.CA must
// refuse for hosts. It signs with f's CA, which it makes again: Generate keeps
// no CA key on disk, so GenerateBad makes its own set when given none.
func GenerateBad(dir string, hosts []string) (*Files, *Bad, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	ca, err := newCA("rpcbed throwaway CA", ECDSA)
	if err != nil {
		return nil, nil, err
	}
	other, err := newCA("another CA", ECDSA)
	if err != nil {
		return nil, nil, err
	}
	f := &Files{Dir: dir, CA: filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem")}
	if err := writePEM(f.CA, "CERTIFICATE", ca.der); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	p := func(name string) [2]string {
		return [2]string{filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")}
	}
	b := &Bad{WrongCA: p("wrongca"), Expired: p("expired"), WrongName: p("wrongname")}
	for _, l := range []struct {
		ca        *authority
		files     [2]string
		hosts     []string
		from, to  time.Time
		usage     x509.ExtKeyUsage
		commonish string
	}{
		{ca, [2]string{f.ServerCert, f.ServerKey}, hosts, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageServerAuth, "rpcbed server"},
		{ca, [2]string{f.ClientCert, f.ClientKey}, nil, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageClientAuth, "rpcbed client"},
		{other, b.WrongCA, hosts, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageServerAuth, "server of another CA"},
		{ca, b.Expired, hosts, now.Add(-48 * time.Hour), now.Add(-time.Hour), x509.ExtKeyUsageServerAuth, "expired server"},
		{ca, b.WrongName, []string{"wrong.rpcbed.invalid"}, now.Add(-time.Hour), now.Add(validity), x509.ExtKeyUsageServerAuth, "server of another name"},
	} {
		if err := l.ca.leaf(l.files[0], l.files[1], ECDSA, l.commonish, l.hosts, l.from, l.to, l.usage); err != nil {
			return nil, nil, err
		}
	}
	return f, b, nil
}

// authority is a CA in memory: its key never reaches the disk.
type authority struct {
	cert *x509.Certificate
	der  []byte
	key  crypto.Signer
}

func newKey(keyType string) (crypto.Signer, error) {
	switch keyType {
	case ECDSA, "":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA:
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return nil, fmt.Errorf("tlsbed: key type %q: want ecdsa or rsa", keyType)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func newCA(name, keyType string) (*authority, error) {
	key, err := newKey(keyType)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name, Organization: []string{"rpcbed"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, der: der, key: key}, nil
}

// leaf signs a leaf for hosts valid from..to and writes its cert and key.
func (a *authority) leaf(certFile, keyFile, keyType, name string, hosts []string, from, to time.Time, usage x509.ExtKeyUsage) error {
	key, err := newKey(keyType)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: name, Organization: []string{"rpcbed"}},
		NotBefore: from, NotAfter: to,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if keyType == RSA {
		tmpl.KeyUsage |= x509.KeyUsageKeyEncipherment // TLS 1.2's RSA key exchange
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return err
	}
	k, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(keyFile, "PRIVATE KEY", k)
}

// writePEM writes one PEM block. Keys too are world-readable: the clients and
// servers of a run may run as another user inside a container, and a run's key
// is thrown away with it.
func writePEM(file, typ string, der []byte) error {
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o644)
}

// DefaultHosts are the names a local run's server leaf carries.
var DefaultHosts = []string{"127.0.0.1", "localhost", "::1"}
