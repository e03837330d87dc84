package matrix

import (
	"context"

	"github.com/rpcbed/rpcbed/internal/measure"
	"github.com/rpcbed/rpcbed/internal/plan"
)

// A cell's security (plan.Security) reaches the run as measure's server set
// says (measure/serverset.go): the run's certificates (e.certs, made once under
// the run's directory), one server per variant of each group, and the client's
// flags (plan.Cell.ClientArgs, with the certificates executor.clientRun gives).

// makeCertificates makes the run's certificates for every key type its cells
// ask, once (measure.Certs.Make).
func (e *executor) makeCertificates(cells []plan.Cell) error {
	if e.certs == nil {
		e.certs = measure.NewCerts(e.o.Dir)
	}
	return e.certs.Make(cells)
}

// startServers starts a group's servers: one per server variant of its cells,
// the first returned with the others as its twins (measure.StartServers).
func (e *executor) startServers(ctx context.Context, key string, cells []plan.Cell) (*measure.ServerProc, error) {
	if e.certs == nil {
		e.certs = measure.NewCerts(e.o.Dir)
	}
	return measure.StartServers(ctx, e.serverRunner(key), key, e.serverConfig(key), cells, e.certs, e.stopServer)
}
