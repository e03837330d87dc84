package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/rpcbed/rpcbed/internal/tlsbed"
)

// runCerts is `rpcbed certs DIR`: a throwaway CA, a server leaf and a client
// leaf, the matrix's own recipe (internal/tlsbed), for scripts that start a TLS
// go-server themselves (make bench-loadgen).
func runCerts(_ context.Context, args []string, s stdio) int {
	fs := flag.NewFlagSet("certs", flag.ContinueOnError)
	fs.SetOutput(s.err)
	key := fs.String("key", tlsbed.ECDSA, "the keys: ecdsa (P-256) or rsa (2048 bits)")
	hosts := fs.String("hosts", strings.Join(tlsbed.DefaultHosts, ","), "the names and addresses the server leaf carries, comma-separated")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: rpcbed certs [-key ecdsa|rsa] [-hosts H,...] DIR\n\n"+
			"Writes a fresh CA (ca.pem; its key is never written), a server leaf (server.pem,\n"+
			"server-key.pem) and a client leaf for mtls (client.pem, client-key.pem) into DIR,\n"+
			"valid for a week: go-server -tls-cert DIR/server.pem -tls-key DIR/server-key.pem,\n"+
			"clients -cacert DIR/ca.pem.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	f, err := tlsbed.Generate(fs.Arg(0), *key, strings.Split(*hosts, ","))
	if err != nil {
		fmt.Fprintf(s.err, "rpcbed certs: %v\n", err)
		return 1
	}
	fmt.Fprintf(s.out, "ca %s\nserver %s %s\nclient %s %s\n", f.CA, f.ServerCert, f.ServerKey, f.ClientCert, f.ClientKey)
	return 0
}
