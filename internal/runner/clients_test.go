package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcbed/rpcbed/internal/report"

	"github.com/rpcbed/rpcbed/internal/testbed"
)

// The end-to-end check of the issue: go-server runs under the runner, every client
// runs under the same runner for each protocol with a small -n, and its report
// parses with complete == n and no failures. Ice and Dubbo have no Go server; they
// run against the Java baseline servers (java-client serve).

const (
	clientN   = 20
	clientC   = 2
	clientRun = 3 * time.Minute // a JVM on a busy 2-core machine starts slowly
)

// setup says how one runner starts each program.
type setup struct {
	r Runner
	// image and command of each program; ok=false (with why) when missing here.
	program func(prog string) (image string, args []string, why string)
	// dep names what RPCBED_REQUIRE must hold for a missing program to fail the
	// test rather than skip it.
	dep func(prog string) string
}

func TestClientsDocker(t *testing.T) {
	d := newDocker(t)
	buildImages(t)
	clientsAgainstServers(t, setup{r: d, dep: func(string) string { return "docker" }, program: func(prog string) (string, []string, string) {
		image, args, err := command(d, repoRoot(t), prog)
		if err != nil {
			return "", nil, err.Error()
		}
		if !d.HasImage(image) {
			return "", nil, fmt.Sprintf("image %s is not built (make images)", image)
		}
		return image, args, ""
	}})
}

func TestClientsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds go-server and go-client")
	}
	root := repoRoot(t)
	bin := t.TempDir()
	// Same flags as `make build`, so the build cache answers.
	build := exec.Command("go", "build", "-o", bin+"/", "./go-server", "./go-client")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l := &Local{Path: []string{bin}}
	t.Cleanup(func() { l.Close() })
	clientsAgainstServers(t, setup{r: l, dep: func(prog string) string { return strings.TrimSuffix(prog, "-server") }, program: func(prog string) (string, []string, string) {
		switch prog {
		case "php":
			if _, err := exec.LookPath("php"); err != nil {
				return "", nil, "php is not installed (make setup)"
			}
			if _, err := os.Stat(filepath.Join(root, "php-client", "ext", "build", "grpc.so")); err != nil {
				return "", nil, "php-client/ext/build/grpc.so is not built (php-client/build-ext.sh)"
			}
		case "java", "java-server":
			if _, err := exec.LookPath("java"); err != nil {
				return "", nil, "java is not installed (make setup)"
			}
			if _, err := os.Stat(filepath.Join(root, "java-client", "target", "java-client.jar")); err != nil {
				return "", nil, "java-client/target/java-client.jar is not built (make setup)"
			}
		}
		image, args, err := command(l, root, prog)
		if err != nil {
			return "", nil, err.Error()
		}
		return image, args, ""
	}})
}

func clientsAgainstServers(t *testing.T, s setup) {
	ctx := context.Background()
	image, args, why := s.program("go-server")
	if why != "" {
		skipOrFail(t, s.dep("go-server"), why)
	}
	grpcAddr, thriftAddr, httpAddr := testbed.FreeAddr(t), testbed.FreeAddr(t), testbed.FreeAddr(t)
	// The server on CPU 0, every client on CPU 1: the layout a cell uses on 2 cores.
	srv, err := s.r.Start(ctx, Task{
		Name:   "go-server",
		Image:  image,
		Args:   append(args, "-grpc", grpcAddr, "-thrift", thriftAddr, "-http", httpAddr),
		CPUSet: "0", MemoryMB: 512,
		Ready: func(ctx context.Context) error {
			if err := TCPCheck(grpcAddr, thriftAddr)(ctx); err != nil {
				return err
			}
			return HTTPCheck("http://" + httpAddr + "/healthz")(ctx)
		},
	})
	if err != nil {
		t.Fatalf("start go-server: %v", err)
	}
	defer func() {
		res, err := srv.Stop(ctx)
		if err != nil {
			t.Errorf("stop go-server: %v", err)
		}
		if t.Failed() {
			t.Logf("go-server stderr:\n%s", res.Stderr)
		}
	}()
	addrs := map[string]string{"grpc": grpcAddr, "thrift": thriftAddr, "http": httpAddr}

	// Java baselines for the protocols go-server does not speak.
	if image, args, why := s.program("java-server"); why == "" {
		for _, proto := range []string{"ice", "dubbo"} {
			addr := testbed.FreeAddr(t)
			_, port, _ := splitHostPort(addr)
			svc, err := s.r.Start(ctx, Task{
				Name: "java-" + proto + "-server", Image: image,
				Args:   append(append([]string{}, args...), "-proto", proto, "-port", port),
				CPUSet: "0", MemoryMB: 512, Timeout: 2 * time.Minute,
				Ready: TCPCheck(addr),
			})
			if err != nil {
				t.Errorf("start java %s server: %v", proto, err)
				continue
			}
			defer svc.Stop(ctx)
			addrs[proto] = addr
		}
	} else {
		t.Logf("no Java baseline servers: %s", why)
	}

	cells := []struct {
		client string
		protos []string
	}{
		{"go", []string{"grpc", "thrift", "http"}},
		{"php", []string{"grpc", "thrift", "http", "ice"}},
		{"java", []string{"grpc", "thrift", "http", "ice", "dubbo"}},
	}
	for _, cell := range cells {
		for _, proto := range cell.protos {
			for _, call := range []string{"datatype", "datalist"} {
				name := fmt.Sprintf("%s-%s-%s-c%d", cell.client, proto, call, clientC)
				t.Run(name, func(t *testing.T) {
					image, args, why := s.program(cell.client)
					if why != "" {
						skipOrFail(t, s.dep(cell.client), why)
					}
					addr, ok := addrs[proto]
					if !ok {
						skipOrFail(t, s.dep("java-server"), "no server for "+proto+" (the Java baseline servers are missing)")
					}
					items := 0
					if call == "datalist" {
						items = 20
					}
					res, err := s.r.Run(ctx, Task{
						Name: name, Image: image,
						Args: append(append([]string{}, args...), "-proto", proto, "-call", call, "-items", strconv.Itoa(items),
							"-c", strconv.Itoa(clientC), "-n", strconv.Itoa(clientN), "-warmup", "0", "-addr", addr),
						CPUSet: "1", CPUs: 1, MemoryMB: 768, Timeout: clientRun,
					})
					if err != nil || res.ExitCode != 0 {
						t.Fatalf("got error %v, exit code %d; want a report\nstderr:\n%s", err, res.ExitCode, Tail(res.Stderr, 4000))
					}
					rep, err := report.Parse(bytes.NewReader(res.Stdout))
					if err != nil {
						t.Fatalf("parse report: %v\nstdout:\n%s", err, res.Stdout)
					}
					if rep.Complete != clientN || rep.Failed != 0 {
						t.Errorf("got complete %d failed %d; want %d and 0", rep.Complete, rep.Failed, clientN)
					}
					if rep.Rpcbed == nil || rep.Rpcbed.Client != cell.client || rep.Rpcbed.Protocol != proto || rep.Rpcbed.Call != call {
						t.Errorf("got rpcbed block %+v; want client %s protocol %s call %s", rep.Rpcbed, cell.client, proto, call)
					}
					if res.CPUUser+res.CPUSystem <= 0 {
						t.Errorf("got client CPU %v+%v; want > 0", res.CPUUser, res.CPUSystem)
					}
					t.Logf("%s: %.0f req/s, wall %v, cpu %v user %v sys", name, rep.RequestsPerSecond, res.Wall.Round(time.Millisecond), res.CPUUser, res.CPUSystem)
				})
			}
		}
	}
	if u, sys, err := srv.Usage(ctx); err == nil {
		t.Logf("go-server CPU so far: %v user %v sys", u, sys)
	} else {
		t.Errorf("go-server usage: %v", err)
	}
}

func splitHostPort(addr string) (host, port string, err error) {
	i := bytes.LastIndexByte([]byte(addr), ':')
	if i < 0 {
		return "", "", fmt.Errorf("no port in %q", addr)
	}
	return addr[:i], addr[i+1:], nil
}

// ImageGo is the Go runtime image docker/images.sh builds (go-server, go-client).
const ImageGo = "rpcbed/go"

// command is the image and the start of the command line of one of rpcbed's
// programs under r, as docker/images.sh lays the images out and a checkout at root
// holds them (production programs come from measure.Programs, which imports this
// package): the clients "go", "php", "java" (flags follow) and the servers
// "go-server" and "java-server" (= java-client serve).
func command(r Runner, root, prog string) (image string, args []string, err error) {
	jar := []string{"java", "-jar", filepath.Join(root, "java-client", "target", "java-client.jar")}
	docker := map[string][2]string{"go": {ImageGo, "go-client"}, "php": {"rpcbed/php", "php-client"},
		"java": {"rpcbed/java", "java-client"}, "go-server": {ImageGo, "go-server"}, "java-server": {"rpcbed/java", "java-client serve"}}
	local := map[string][]string{"go": {"go-client"}, "php": {filepath.Join(root, "php-client", "bin", "php-client")},
		"java": jar, "go-server": {"go-server"}, "java-server": append(slices.Clone(jar), "serve")}
	switch r.(type) {
	case *Docker:
		if d, ok := docker[prog]; ok {
			return d[0], strings.Fields(d[1]), nil
		}
	case *Local:
		if a, ok := local[prog]; ok {
			return "", a, nil
		}
	default:
		return "", nil, fmt.Errorf("runner %T: no programs known", r)
	}
	return "", nil, fmt.Errorf("unknown program %q (want go|php|java|go-server|java-server)", prog)
}
