package plan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Every registry row is whole and agrees with the vocabulary: a client added
// with a typo fails here, not in a run.
func TestRegistryRows(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range ClientKinds {
		t.Run(c.Name, func(t *testing.T) {
			if seen[c.Name] {
				t.Fatalf("client %s listed twice", c.Name)
			}
			seen[c.Name] = true
			if !slices.Contains(Languages, c.Language) {
				t.Errorf("language %q: want one of %v", c.Language, Languages)
			}
			if c.Program == "" || c.Local == "" {
				t.Errorf("got program %q, local %q; want both", c.Program, c.Local)
			}
			if len(c.Protocols) == 0 {
				t.Error("no protocol")
			}
			for _, p := range c.Protocols {
				if !slices.Contains(Protocols, p) {
					t.Errorf("protocol %q is not in the vocabulary %v", p, Protocols)
				}
			}
			if !slices.IsSortedFunc(c.Protocols, func(a, b string) int { return slices.Index(Protocols, a) - slices.Index(Protocols, b) }) {
				t.Errorf("protocols %v: want the vocabulary's order", c.Protocols)
			}
			if c.Base != "" {
				b, ok := ClientOf(c.Base)
				switch {
				case !ok:
					t.Errorf("base %q is no client", c.Base)
				case b.Language != c.Language || b.Program != c.Program:
					t.Errorf("base %s runs %s/%s; want the variant's %s/%s", b.Name, b.Language, b.Program, c.Language, c.Program)
				case len(c.Flags) == 0:
					t.Error("a variant without flags runs as its base")
				case !strings.HasPrefix(c.Name, c.Base+"-"):
					t.Errorf("variant %s: want its name to start with %s-", c.Name, c.Base)
				}
			}
			var r, g, b uint8
			if n, err := fmt.Sscanf(c.Color, "#%02x%02x%02x", &r, &g, &b); n != 3 || err != nil {
				t.Errorf("colour %q: want #rrggbb", c.Color)
			}
		})
	}
	for _, s := range ServerKinds {
		if !slices.Contains(Languages, s.Language) || s.Role != s.Name+"-server" || len(s.Protocols) == 0 {
			t.Errorf("server %+v: want a language, the role %s-server and protocols", s, s.Name)
		}
	}
	for _, p := range Protocols {
		if defaultServer(p) == "" {
			t.Errorf("protocol %s: no server serves it", p)
		}
	}
}

// What the rest of rpcbed reads from the registry.
func TestRegistryReads(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"clients in php", strings.Join(ClientsIn("php"), " "), "php php-pure"},
		{"language of php-pure", LanguageOf("php-pure"), "php"},
		{"language of java-server", LanguageOf("java-server"), "java"},
		{"language of nothing", LanguageOf("cobol"), ""},
		{"roles", strings.Join(Roles, " "), "go-server java-server go php php-pure java"},
		{"default server of ice", defaultServer("ice"), "java"},
		{"default server of grpc", defaultServer("grpc"), "go"},
		{"php's conns equal c over grpc", oneCallPerConn(Cell{Client: "php", Protocol: "grpc"}), true},
		{"go over grpc shares connections", oneCallPerConn(Cell{Client: "go", Protocol: "grpc"}), false},
		{"go over thrift: one call per connection", oneCallPerConn(Cell{Client: "go", Protocol: "thrift"}), true},
		{"java-grpc server process", Cell{ServerLang: "java", Protocol: "grpc"}.ServerProcKey(), "java-grpc"},
		{"go-server process", Cell{ServerLang: "go", Protocol: "thrift"}.ServerProcKey(), "go-server"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v; want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, tc := range []struct{ name, client, rest string }{
		{"php-pure-grpc", "php-pure", "grpc"},
		{"php-grpc-datalist-200-c1", "php", "grpc-datalist-200-c1"},
		{"go-http", "go", "http"},
		{"ruby-grpc", "", "ruby-grpc"},
	} {
		c, rest, ok := SplitClient(tc.name)
		if c != tc.client || rest != tc.rest || ok != (tc.client != "") {
			t.Errorf("SplitClient(%q): got %q %q %v; want %q %q", tc.name, c, rest, ok, tc.client, tc.rest)
		}
	}
}
