package measure

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpcbed/rpcbed/internal/runner"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// ServerProc is a running server process: go-server (grpc, thrift and http from
// one process) or one Java baseline.
type ServerProc struct {
	Key   string
	Svc   runner.Service
	Addrs map[string]string // protocol -> 127.0.0.1:port
	// StatsURL is the server's /stats (go-server's HTTP listener, a Java baseline's
	// -stats-port); "" when it has none.
	StatsURL string
	ready    runner.Check
	// alive, when set, is Alive's check instead of ready (a multi-host server:
	// ready is checked from the clients' hosts once, alive by the driver).
	alive runner.Check
	// Variant is the server variant it serves (plan.Security.ServerVariant:
	// "" plaintext, "tls", "mtls+rsa" ...) and TLS its certificates (nil for
	// plaintext); twins are the group's servers of its other variants (For).
	Variant string
	TLS     *ServerTLS
	twins   map[string]*ServerProc
	// httpc reads a TLS server's /stats; nil: statsClient.
	httpc *http.Client
}

// ServerProcConfig is what StartServerProc needs besides the key.
type ServerProcConfig struct {
	Programs       Programs
	Resources      plan.Resources
	Store          string
	RedisAddr      string
	AerospikeHosts string
	Auth           bool
	// NoJavaStats starts a Java baseline without its /stats listener (-stats-port).
	NoJavaStats bool
	// Address, on a multi-host run, is the server host's address: the server
	// listens on every interface and clients get Address:port. "" = 127.0.0.1.
	Address string
	// TLS, when set, serves TLS only with these certificates (security.go);
	// Mounts are host directories the server must read (its certificates),
	// mounted read-only at the same path in a container.
	TLS    *ServerTLS
	Mounts []string
	// ReadyFrom, when set, is called once the server runs with every address a
	// client will dial: it must return nil once they answer from the clients' side
	// of the link (runner.Docker.WaitFrom).
	ReadyFrom func(ctx context.Context, addrs []string) error
}

// listenAddr and dialAddr are where a server binds port and where clients reach it.
func (cfg ServerProcConfig) listenAddr(port int) string {
	if cfg.Address != "" {
		return net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	}
	return loopback(port)
}

func (cfg ServerProcConfig) dialAddr(port int) string {
	if cfg.Address != "" {
		return net.JoinHostPort(cfg.Address, strconv.Itoa(port))
	}
	return loopback(port)
}

func loopback(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// StartServerProc starts the server a cell's ServerProcKey names, on free ports, and waits
// until it answers.
func StartServerProc(ctx context.Context, r runner.Runner, key string, cfg ServerProcConfig) (*ServerProc, error) {
	s := &ServerProc{Key: key, Addrs: map[string]string{}}
	var prog Program
	if key == "go-server" {
		ports, err := runner.FreePorts(3)
		if err != nil {
			return nil, err
		}
		s.Addrs["grpc"], s.Addrs["thrift"], s.Addrs["http"] = cfg.dialAddr(ports[0]), cfg.dialAddr(ports[1]), cfg.dialAddr(ports[2])
		s.StatsURL = "http://" + s.Addrs["http"] + "/stats"
		args := []string{"-grpc", cfg.listenAddr(ports[0]), "-thrift", cfg.listenAddr(ports[1]), "-http", cfg.listenAddr(ports[2]),
			"-store", cfg.Store, "-auth=" + strconv.FormatBool(cfg.Auth)}
		http := runner.HTTPCheck("http://" + s.Addrs["http"] + "/healthz")
		if cfg.TLS != nil {
			// Every listener serves TLS, /stats and /healthz too.
			hc, err := cfg.TLS.client()
			if err != nil {
				return nil, err
			}
			s.TLS, s.httpc = cfg.TLS, hc
			s.StatsURL = "https://" + s.Addrs["http"] + "/stats"
			http = tlsCheck(hc, "https://"+s.Addrs["http"]+"/healthz")
			args = append(args, cfg.TLS.args()...)
		}
		if cfg.Store == "redis" {
			args = append(args, "-redis-addr", cfg.RedisAddr)
		}
		if cfg.Store == "aerospike" {
			args = append(args, "-aerospike-hosts", cfg.AerospikeHosts)
		}
		prog = cfg.Programs.GoServer(args...)
		tcp := runner.TCPCheck(s.Addrs["grpc"], s.Addrs["thrift"])
		s.ready = func(ctx context.Context) error {
			if err := http(ctx); err != nil {
				return err
			}
			return tcp(ctx)
		}
	} else {
		proto := key[len("java-"):]
		ports, err := runner.FreePorts(2)
		if err != nil {
			return nil, err
		}
		p, sp := ports[0], ports[1]
		s.Addrs[proto] = cfg.dialAddr(p)
		args := []string{"-proto", proto, "-port", strconv.Itoa(p), "-auth=" + strconv.FormatBool(cfg.Auth)}
		if cfg.TLS != nil {
			s.TLS = cfg.TLS
			args = append(args, cfg.TLS.args()...) // its -stats-port stays plaintext
		}
		statsAddr := loopback(sp)
		if cfg.Address != "" {
			// Every interface, /stats too (as go-server's HTTP listener), reached
			// at the server host's address.
			args = append(args, "-host", "0.0.0.0")
			statsAddr = cfg.dialAddr(sp)
		}
		if !cfg.NoJavaStats {
			// The baseline's /stats listener (docs/method.md, section 10).
			args = append(args, "-stats-port", strconv.Itoa(sp))
			s.StatsURL = "http://" + statsAddr + "/stats"
			s.ready = runner.TCPCheck(s.Addrs[proto], statsAddr)
		} else {
			s.ready = runner.TCPCheck(s.Addrs[proto])
		}
		prog = cfg.Programs.JavaServer(args...)
	}
	ready := s.ready
	if cfg.ReadyFrom != nil {
		// Running is enough here: the clients' side checks the ports below.
		ready = nil
		if s.StatsURL != "" {
			s.alive = runner.HTTPCheck(s.StatsURL)
		} else {
			s.alive = func(context.Context) error { return nil }
		}
	}
	svc, err := r.Start(ctx, runner.Task{
		Name: key, Image: prog.Image, Args: prog.Args, Env: prog.Env,
		CPUs: cfg.Resources.CPUs, CPUSet: cfg.Resources.CPUSet, MemoryMB: cfg.Resources.MemoryMB,
		Timeout: 60 * time.Second, Ready: ready, Mounts: cfg.Mounts,
	})
	if err == nil && cfg.ReadyFrom != nil {
		addrs := make([]string, 0, len(s.Addrs))
		for _, p := range slices.Sorted(maps.Keys(s.Addrs)) {
			addrs = append(addrs, s.Addrs[p])
		}
		if rerr := cfg.ReadyFrom(ctx, addrs); rerr != nil {
			r, _ := svc.Stop(context.Background())
			return nil, fmt.Errorf("start %s: not ready from the clients' side: %w; stderr: %s", key, rerr, runner.OneLine(runner.Tail(r.Stderr, 1000)))
		}
	}
	if err != nil {
		if key != "go-server" && !cfg.NoJavaStats && strings.Contains(err.Error(), "stats-port") {
			// A java-client built before its stats listener: the server's CPU and
			// calls over the window are then unknown.
			cfg.NoJavaStats = true
			return StartServerProc(ctx, r, key, cfg)
		}
		return nil, err
	}
	s.Svc = svc
	return s, nil
}

// Alive reports whether the server, and each of its twins, still answers.
func (s *ServerProc) Alive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	for _, v := range slices.Sorted(maps.Keys(s.twins)) {
		if err := s.twins[v].Alive(ctx); err != nil {
			return fmt.Errorf("%s: %w", s.twins[v].Key, err)
		}
	}
	if s.alive != nil {
		return s.alive(ctx)
	}
	return s.ready(ctx)
}

// Snapshot is a server's CPU (seconds) and the calls it served on one protocol
// and call so far (-1 when the server has no /stats).
type Snapshot struct {
	CPU   float64
	Calls int64
	// Versions as /stats names them.
	Versions map[string]string
}

// Snapshot reads the server's counters for proto x call: /stats, or the runner's
// usage of a server without one.
func (s *ServerProc) Snapshot(ctx context.Context, proto, call string) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.StatsURL == "" {
		u, sys, err := s.Svc.Usage(ctx)
		if err != nil {
			return Snapshot{}, err
		}
		return Snapshot{CPU: (u + sys).Seconds(), Calls: -1}, nil
	}
	st, _, err := s.ReadStats(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	return Snapshot{CPU: st.CPUUserS + st.CPUSystemS, Calls: st.Calls[proto][call].Requests, Versions: st.Versions}, nil
}

// JITMs is a JVM server's accumulated JIT compile time (ms) from /stats, its twins'
// added (a TLS twin serves the TLS cells); ok is
// false for a server without one (go-server) or one that did not answer.
func (s *ServerProc) JITMs(ctx context.Context) (float64, bool) {
	if s == nil || s.StatsURL == "" {
		return 0, false
	}
	st, _, err := s.ReadStats(ctx)
	if err != nil || st.JITCompileMs == nil {
		return 0, false
	}
	ms := float64(*st.JITCompileMs)
	for _, t := range s.Twins() {
		if tm, ok := t.JITMs(ctx); ok {
			ms += tm // a TLS shape's prime runs against the TLS twin
		}
	}
	return ms, true
}
