package load

import (
	"testing"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// goServer starts the real go-server in-process on :0 ports, auth checked (so
// every test also proves the token round trip), and returns its addresses by
// protocol.
func goServer(t testing.TB) map[string]string {
	t.Helper()
	return goServerThrift(t, "framed", "binary")
}

// goServerThrift is goServer with its Thrift listener's transport and protocol.
func goServerThrift(t testing.TB, transport, protocol string) map[string]string {
	t.Helper()
	addrs := testbed.InProcess(t, transport, protocol)
	return addrs
}
