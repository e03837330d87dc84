package measure

import (
	"context"
	"errors"
	"github.com/rpcbed/rpcbed/internal/matrix/matrixtest"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/runner"
)

// argsRunner records the Spec of the program it is asked to start and refuses it.
type argsRunner struct{ got runner.Task }

func (a *argsRunner) Run(context.Context, runner.Task) (runner.Result, error) {
	return runner.Result{}, errors.New("not used")
}
func (a *argsRunner) Start(_ context.Context, s runner.Task) (runner.Service, error) {
	a.got = s
	return nil, errors.New("recorded")
}
func (a *argsRunner) Close() error { return nil }

func TestStartServerStoreFlags(t *testing.T) {
	for _, tc := range []struct {
		name, store          string
		redis, aerospike     string
		wantRedis, wantHosts string
	}{
		{"memory", "memory", "127.0.0.1:6379", "127.0.0.1:3000", "", ""},
		{"redis", "redis", "127.0.0.1:6390", "127.0.0.1:3000", "127.0.0.1:6390", ""},
		{"aerospike", "aerospike", "127.0.0.1:6379", "127.0.0.1:3100,127.0.0.1:3200", "", "127.0.0.1:3100,127.0.0.1:3200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &argsRunner{}
			_, err := StartServerProc(context.Background(), r, "go-server", ServerProcConfig{
				Programs: Programs{Root: "/repo"}, Store: tc.store, RedisAddr: tc.redis, AerospikeHosts: tc.aerospike})
			if err == nil || !strings.Contains(err.Error(), "recorded") {
				t.Fatalf("StartServerProc error = %v; want the runner's", err)
			}
			args := r.got.Args
			if got := matrixtest.FlagValue(args, "-store"); got != tc.store {
				t.Errorf("-store %q; want %q (args %q)", got, tc.store, args)
			}
			if got := matrixtest.FlagValue(args, "-redis-addr"); got != tc.wantRedis {
				t.Errorf("-redis-addr %q; want %q (args %q)", got, tc.wantRedis, args)
			}
			if got := matrixtest.FlagValue(args, "-aerospike-hosts"); got != tc.wantHosts {
				t.Errorf("-aerospike-hosts %q; want %q (args %q)", got, tc.wantHosts, args)
			}
		})
	}
}
