package plan

import (
	"slices"
	"strings"
)

// The registry: what each client and each server can do, written once. The spec's
// checks, the plan, the programs the driver starts, the images a host or a swarm
// node needs and the renderers read it. Adding a client is a row here, its folder
// (<lang>-client/, the shared flags, exit codes and report) and an image recipe
// under docker/ (docs/clients.md: "Adding a client or a protocol").

// Client is one load client, or a variant of one: a variant runs its base's
// program with Flags on every run and is named, planned and compared apart.
type Client struct {
	// Name is the first word of its cells' names: go, php, php-pure, java.
	Name string
	// Language is what it is written in and runs on: go, php or java. It names
	// the runtime image (rpcbed/<Language>), and the language comparisons
	// ("PHP vs Go") group clients by it.
	Language string
	// Program is its program: on PATH in the runtime image, and Local in a
	// checkout (from the repository root; a .jar runs under java -jar).
	Program string
	Local   string
	// Base is the client whose program a variant runs ("" when it is no variant);
	// Flags are what make the variant, put first on every run's command line
	// (after `worker` for a worker) and on every run a worker is handed.
	Base  string
	Flags []string
	// Protocols are the protocols it speaks, in the vocabulary's order.
	Protocols []string
	// ConnPerCaller says every caller owns one connection (php-client forks a
	// process per caller): -conns must equal c for every protocol.
	ConnPerCaller bool
	// Color is its colour in plots and on the page (#rrggbb).
	Color string
}

// Server is one server implementation a cell can be served by (Cell.ServerLang).
type Server struct {
	// Name is go or java; Role is its hosts role (go-server, java-server).
	Name, Role string
	// Language names its runtime image (rpcbed/<Language>).
	Language string
	// Protocols are what it serves. A protocol's default server is the first
	// server of Servers that serves it.
	Protocols []string
	// PerProtocol says it serves one protocol per process (the Java baselines);
	// otherwise one process serves all its protocols (go-server).
	PerProtocol bool
	// JVM says it runs on a JVM: a spec's forks start it again (Spec.ForksFor).
	JVM bool
}

// ClientKinds are the clients, in the order tables and plots list them.
var ClientKinds = []Client{
	{Name: "go", Language: "go", Program: "go-client", Local: "bin/go-client",
		Protocols: []string{"grpc", "thrift", "http"}, Color: "#007d9c"}, // Go's blue
	{Name: "php", Language: "php", Program: "php-client", Local: "php-client/bin/php-client",
		Protocols: []string{"grpc", "thrift", "http", "ice"}, ConnPerCaller: true, Color: "#777bb4"}, // PHP's purple
	// php-pure is php-client with -runtime pure: the pure-PHP protobuf and Thrift
	// runtimes beside php's production ones (the protobuf C extension, the Thrift
	// accelerator). It speaks only where a pure-PHP runtime decodes: curl +
	// json_decode and Ice decode in C either way.
	{Name: "php-pure", Language: "php", Program: "php-client", Local: "php-client/bin/php-client",
		Base: "php", Flags: []string{"-runtime", "pure"},
		Protocols: []string{"grpc", "thrift"}, ConnPerCaller: true, Color: "#8c5a2b"}, // brown: the same language, another runtime, no protocol's colour
	{Name: "java", Language: "java", Program: "java-client", Local: "java-client/target/java-client.jar",
		Protocols: []string{"grpc", "thrift", "http", "ice", "dubbo"}, Color: "#e76f00"}, // Java's orange
}

// ServerKinds are the servers, go-server (the reference) first: a run starts
// them in this order.
var ServerKinds = []Server{
	{Name: "go", Role: "go-server", Language: "go", Protocols: []string{"grpc", "thrift", "http"}},
	{Name: "java", Role: "java-server", Language: "java", Protocols: []string{"grpc", "thrift", "http", "ice", "dubbo"},
		PerProtocol: true, JVM: true},
}

// Languages are the runtime images, in the order they are listed.
var Languages = []string{"go", "php", "java"}

// ConnPerCallProtocols carry one call at a time per connection in every client
// (Thrift's framed transport, HTTP/1.1 keep-alive): -conns must equal c.
var ConnPerCallProtocols = []string{"thrift", "http"}

// ClientOf is the registry row of a client name; ok is false for none.
func ClientOf(name string) (Client, bool) {
	i := slices.IndexFunc(ClientKinds, func(c Client) bool { return c.Name == name })
	if i < 0 {
		return Client{}, false
	}
	return ClientKinds[i], true
}

// ServerOf is the registry row of a server name (go, java); ok is false for none.
func ServerOf(name string) (Server, bool) {
	i := slices.IndexFunc(ServerKinds, func(s Server) bool { return s.Name == name })
	if i < 0 {
		return Server{}, false
	}
	return ServerKinds[i], true
}

// ClientsIn are the clients written in language, in the registry's order
// (php: php, php-pure).
func ClientsIn(language string) []string {
	var out []string
	for _, c := range ClientKinds {
		if c.Language == language {
			out = append(out, c.Name)
		}
	}
	return out
}

// LanguageOf is the language of a client or a hosts role (go-server: go); "" for
// neither.
func LanguageOf(role string) string {
	if c, ok := ClientOf(role); ok {
		return c.Language
	}
	for _, s := range ServerKinds {
		if s.Role == role {
			return s.Language
		}
	}
	return ""
}

// SplitClient splits a name that starts with a client ("php-pure-grpc",
// "php-pure-grpc-datalist-200-c1") into the client and the rest, the longest
// client name first so php-pure is not read as php; ok is false when no client
// starts it.
func SplitClient(name string) (client, rest string, ok bool) {
	best := ""
	for _, c := range ClientKinds {
		if strings.HasPrefix(name, c.Name+"-") && len(c.Name) > len(best) {
			best = c.Name
		}
	}
	if best == "" {
		return "", name, false
	}
	return best, name[len(best)+1:], true
}

// names lists the Name of every row.
func clientNames() []string {
	out := make([]string, len(ClientKinds))
	for i, c := range ClientKinds {
		out[i] = c.Name
	}
	return out
}

// defaultServer is the server a protocol runs on when the spec names none.
func defaultServer(proto string) string {
	for _, s := range ServerKinds {
		if slices.Contains(s.Protocols, proto) {
			return s.Name
		}
	}
	return ""
}

// oneCallPerConn says cell c's connections must equal its concurrency: its
// client gives every caller its own connection, or its protocol carries one
// call at a time on one.
func oneCallPerConn(c Cell) bool {
	cl, _ := ClientOf(c.Client)
	return cl.ConnPerCaller || slices.Contains(ConnPerCallProtocols, c.Protocol)
}
