package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
)

// Aerospike is the published experiment's store: namespace "test", set
// "data_type_def", bins cnname and code_id. The lock is a create-only record in the
// set "data_type_def_lock" with a TTL, deleted on release.
type Aerospike struct {
	c       *as.Client
	ns, set string
	read    *as.BasePolicy
	write   *as.WritePolicy
}

// OpenAerospike connects to hosts ("host:port[,host:port]").
func OpenAerospike(hosts, namespace, set string) (*Aerospike, error) {
	if hosts == "" {
		return nil, errors.New("store: aerospike needs -aerospike-hosts host:port")
	}
	if namespace == "" {
		namespace = "test"
	}
	if set == "" {
		set = "data_type_def"
	}
	hs, err := as.NewHosts(strings.Split(hosts, ",")...)
	if err != nil {
		return nil, fmt.Errorf("store: aerospike hosts %q: %w", hosts, err)
	}
	cp := as.NewClientPolicy()
	cp.Timeout = 3 * time.Second
	c, err := as.NewClientWithPolicyAndHost(cp, hs...)
	if err != nil {
		return nil, fmt.Errorf("store: aerospike at %s: %w", hosts, err)
	}
	return &Aerospike{c: c, ns: namespace, set: set, read: as.NewPolicy(), write: as.NewWritePolicy(0, 0)}, nil
}

func (a *Aerospike) key(set, key string) (*as.Key, error) {
	k, err := as.NewKey(a.ns, set, key)
	if err != nil {
		return nil, err
	}
	return k, nil
}

func (a *Aerospike) Get(_ context.Context, key string) (Record, bool, error) {
	k, err := a.key(a.set, key)
	if err != nil {
		return Record{}, false, err
	}
	rec, aerr := a.c.Get(a.read, k, "cnname", "code_id")
	if aerr != nil {
		if aerr.Matches(types.KEY_NOT_FOUND_ERROR) {
			return Record{}, false, nil
		}
		return Record{}, false, aerr
	}
	name, _ := rec.Bins["cnname"].(string)
	var code int64
	switch v := rec.Bins["code_id"].(type) {
	case int:
		code = int64(v)
	case int64:
		code = v
	default:
		return Record{}, false, fmt.Errorf("store: aerospike %s: code_id has type %T", key, v)
	}
	return Record{CnName: name, CodeID: code}, true, nil
}

func (a *Aerospike) Put(_ context.Context, key string, r Record) error {
	k, err := a.key(a.set, key)
	if err != nil {
		return err
	}
	if aerr := a.c.Put(a.write, k, as.BinMap{"cnname": r.CnName, "code_id": r.CodeID}); aerr != nil {
		return aerr
	}
	return nil
}

func (a *Aerospike) TryLock(_ context.Context, key string, ttl time.Duration) (func(), error) {
	k, err := a.key(a.set+"_lock", key)
	if err != nil {
		return nil, err
	}
	wp := as.NewWritePolicy(0, uint32((ttl+time.Second-1)/time.Second))
	wp.RecordExistsAction = as.CREATE_ONLY
	if aerr := a.c.Put(wp, k, as.BinMap{"owner": 1}); aerr != nil {
		if aerr.Matches(types.KEY_EXISTS_ERROR) {
			return nil, nil
		}
		return nil, aerr
	}
	return func() { a.c.Delete(a.write, k) }, nil
}

func (a *Aerospike) Close() error { a.c.Close(); return nil }
