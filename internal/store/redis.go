package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis keeps each record as a hash {cnname, code_id} under "data_type_def:KEY" and
// locks with SET NX PX plus an owner-checked release.
type Redis struct {
	c *redis.Client
}

const redisPrefix = "data_type_def:"

// release deletes the lock only when the caller still owns it.
var redisRelease = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

// OpenRedis connects to addr and checks it answers PING.
func OpenRedis(ctx context.Context, addr string) (*Redis, error) {
	if addr == "" {
		addr = "127.0.0.1:6379"
	}
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 2 * time.Second})
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := c.Ping(pctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("store: redis at %s: %w", addr, err)
	}
	return &Redis{c: c}, nil
}

func (r *Redis) Get(ctx context.Context, key string) (Record, bool, error) {
	vals, err := r.c.HMGet(ctx, redisPrefix+key, "cnname", "code_id").Result()
	if err != nil {
		return Record{}, false, err
	}
	name, ok1 := vals[0].(string)
	code, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return Record{}, false, nil
	}
	id, err := strconv.ParseInt(code, 10, 64)
	if err != nil {
		return Record{}, false, fmt.Errorf("store: redis %s: bad code_id %q", key, code)
	}
	return Record{CnName: name, CodeID: id}, true, nil
}

func (r *Redis) Put(ctx context.Context, key string, rec Record) error {
	return r.c.HSet(ctx, redisPrefix+key, "cnname", rec.CnName, "code_id", rec.CodeID).Err()
}

func (r *Redis) TryLock(ctx context.Context, key string, ttl time.Duration) (func(), error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	owner := hex.EncodeToString(b[:])
	lockKey := "lock:" + redisPrefix + key
	ok, err := r.c.SetNX(ctx, lockKey, owner, ttl).Result()
	if err != nil || !ok {
		return nil, err
	}
	return func() {
		// A fresh context: the caller's may be done, and the lock must still go.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		redisRelease.Run(ctx, r.c, []string{lockKey}, owner)
	}, nil
}

// Delete removes a record; tests use it to start from a miss.
func (r *Redis) Delete(ctx context.Context, key string) error {
	return r.c.Del(ctx, redisPrefix+key).Err()
}

func (r *Redis) Close() error { return r.c.Close() }
