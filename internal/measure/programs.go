package measure

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// Programs says how the runner starts each program: by image and PATH name in a
// container (rpcbed/go has go-client and go-server, rpcbed/php php-client and
// php-front, rpcbed/java java-client), or by path in this checkout locally.
type Programs struct {
	// Docker selects images and PATH names; otherwise local paths under Root.
	Docker bool
	// Root is the repository root (local programs: bin/, php-client/, java-client/).
	Root string
	// Images overrides the image per runtime (go, php, java); default rpcbed/NAME:latest.
	Images map[string]string
	// JavaOpts are extra JVM flags for every Java program.
	JavaOpts []string
}

// Program is what a runner.Task needs to start one program.
type Program struct {
	Image string
	Args  []string
	Env   []string
}

// Image is the image of a runtime (go, php, java): Images', else rpcbed/NAME:latest.
func (p Programs) Image(runtime string) string {
	if im, ok := p.Images[runtime]; ok {
		return im
	}
	return "rpcbed/" + runtime + ":latest"
}

// Client is the load client of one language (or variant: php-pure is php-client
// -runtime pure) with args: its registry row's program (plan.ClientKinds), the
// variant's flags first (after `worker` for a worker).
func (p Programs) Client(client string, args ...string) Program {
	cl, ok := plan.ClientOf(client)
	if !ok {
		cl, _ = plan.ClientOf("go")
	}
	if len(cl.Flags) > 0 {
		at := 0
		if len(args) > 0 && args[0] == "worker" {
			at = 1
		}
		args = append(append(slices.Clone(args[:at]), cl.Flags...), args[at:]...)
	}
	return p.program(cl.Language, cl.Program, cl.Local, args...)
}

// Worker is the client's worker (docs/report-format.md, "Worker mode"): its
// program with the worker subcommand; each run's flags go on its stdin
// (ClientFlags). A variant's worker is its base's: the variant's flags come
// with every run.
func (p Programs) Worker(client string) Program {
	base := client
	if cl, ok := plan.ClientOf(client); ok && cl.Base != "" {
		base = cl.Base
	}
	prog := p.Client(base)
	prog.Args = append(prog.Args, "worker")
	return prog
}

// ClientFlags are the flags of one run of client: args, plus what names a
// variant (php-pure: -runtime pure), as Client puts them on the command line.
func (p Programs) ClientFlags(client string, args ...string) []string {
	cl, _ := plan.ClientOf(client)
	return append(slices.Clone(cl.Flags), args...)
}

// GoServer is go-server with args.
func (p Programs) GoServer(args ...string) Program { return p.goProgram("go-server", args...) }

// GoFront is `go-client front` with args.
func (p Programs) GoFront(args ...string) Program {
	return p.goProgram("go-client", append([]string{"front"}, args...)...)
}

// FrontOpcache is the environment setting of the production PHP front: OPcache on.
// PHPFront without it is the published set-up (plain php -S, default ini).
const FrontOpcache = "RPCBED_FRONT_OPCACHE=1"

// FrontWithoutGuard runs php -S on the front's address itself, without
// php-client/bin/front-guard.php in front of it (which bounds what reaches php -S:
// php-client/README.md, "Front mode"). Both variants run with the guard by default.
const FrontWithoutGuard = "RPCBED_FRONT_GUARD=0"

// PHPFront is php-client/bin/php-front (php -S with front.php); env sets LISTEN and
// the backends' addresses. It is the published set-up: no OPcache.
func (p Programs) PHPFront(env ...string) Program {
	if p.Docker {
		return Program{Image: p.Image("php"), Args: []string{"/opt/rpcbed/php-client/bin/php-front"}, Env: env}
	}
	return Program{Args: []string{filepath.Join(p.Root, "php-client/bin/php-front")}, Env: env}
}

// PHPFrontProduction is PHPFront as PHP services run it: OPcache on (FrontOpcache).
// Both keep one channel per php -S worker process across requests.
func (p Programs) PHPFrontProduction(env ...string) Program {
	return p.PHPFront(append(slices.Clone(env), FrontOpcache)...)
}

// JavaServer is `java-client serve` with args: the Java baselines (java-server/)
// ship in java-client's jar.
func (p Programs) JavaServer(args ...string) Program {
	return p.Client("java", append([]string{"serve"}, args...)...)
}

func (p Programs) goProgram(name string, args ...string) Program {
	return p.program("go", name, "bin/"+name, args...)
}

// program is a program of the runtime image language: name on the image's PATH,
// or local (from Root) in this checkout; a .jar runs under java -jar, and every
// JVM gets JavaOpts (JAVA_OPTS in the image).
func (p Programs) program(language, name, local string, args ...string) Program {
	jar := strings.HasSuffix(local, ".jar")
	if p.Docker {
		var env []string
		if jar && len(p.JavaOpts) > 0 {
			env = []string{"JAVA_OPTS=" + joinSpace(p.JavaOpts)}
		}
		return Program{Image: p.Image(language), Args: append([]string{name}, args...), Env: env}
	}
	if jar {
		argv := append([]string{"java"}, p.JavaOpts...)
		argv = append(argv, "-jar", filepath.Join(p.Root, local))
		return Program{Args: append(argv, args...)}
	}
	return Program{Args: append([]string{filepath.Join(p.Root, local)}, args...)}
}

func joinSpace(v []string) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}
