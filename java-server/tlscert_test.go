package javaserver_test

import (
	"testing"

	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// certs is one test's files: the run's certificates as the matrix makes them
// (internal/tlsbed: a throwaway CA, an ECDSA P-256 server leaf for
// 127.0.0.1, localhost and ::1, a client leaf for mtls, PKCS#8 keys).
type certs struct {
	CA, Cert, Key         string // the CA, the server's leaf and key
	ClientCert, ClientKey string // a client leaf of the same CA (mtls)
}

func newCerts(t *testing.T) certs {
	t.Helper()
	f, err := tlsbed.Generate(t.TempDir(), tlsbed.ECDSA, tlsbed.DefaultHosts)
	if err != nil {
		t.Fatal(err)
	}
	return certs{CA: f.CA, Cert: f.ServerCert, Key: f.ServerKey, ClientCert: f.ClientCert, ClientKey: f.ClientKey}
}
