package measure

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpcbed/rpcbed/internal/plan"
)

// php-pure is php-client with -runtime pure, in both runners; php is php-client as is.
func TestProgramsClientVariants(t *testing.T) {
	for _, tc := range []struct {
		name   string
		p      Programs
		client string
		image  string
		args   string
	}{
		{"docker php", Programs{Docker: true}, "php", "rpcbed/php:latest", "php-client -proto grpc"},
		{"docker php-pure", Programs{Docker: true}, "php-pure", "rpcbed/php:latest", "php-client -runtime pure -proto grpc"},
		{"local php", Programs{Root: "/r"}, "php", "", "/r/php-client/bin/php-client -proto grpc"},
		{"local php-pure", Programs{Root: "/r"}, "php-pure", "", "/r/php-client/bin/php-client -runtime pure -proto grpc"},
		{"php-pure worker", Programs{Root: "/r"}, "php-pure", "", "/r/php-client/bin/php-client worker -runtime pure"},
		{"docker go", Programs{Docker: true}, "go", "rpcbed/go:latest", "go-client -proto grpc"},
		{"local go", Programs{Root: "/r"}, "go", "", "/r/bin/go-client -proto grpc"},
		{"docker java", Programs{Docker: true}, "java", "rpcbed/java:latest", "java-client -proto grpc"},
		{"local java", Programs{Root: "/r", JavaOpts: []string{"-Xmx1g"}}, "java", "", "java -Xmx1g -jar /r/java-client/target/java-client.jar -proto grpc"},
		{"unknown client runs go-client", Programs{Root: "/r"}, "cobol", "", "/r/bin/go-client -proto grpc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"-proto", "grpc"}
			if strings.HasSuffix(tc.name, "worker") {
				args = []string{"worker"}
			}
			got := tc.p.Client(tc.client, args...)
			if got.Image != tc.image || strings.Join(got.Args, " ") != tc.args {
				t.Errorf("got %q %q; want %q %q", got.Image, strings.Join(got.Args, " "), tc.image, tc.args)
			}
		})
	}
}

// A worker of a variant is its base's program; the variant's flags come with
// every run (ClientFlags). A Java program in an image gets JavaOpts as JAVA_OPTS.
func TestProgramsWorkerAndJava(t *testing.T) {
	p := Programs{Root: "/r"}
	if got := strings.Join(p.Worker("php-pure").Args, " "); got != "/r/php-client/bin/php-client worker" {
		t.Errorf("php-pure worker: got %q; want php-client's worker", got)
	}
	if got := strings.Join(p.ClientFlags("php-pure", "-c", "1"), " "); got != "-runtime pure -c 1" {
		t.Errorf("php-pure flags: got %q; want -runtime pure -c 1", got)
	}
	if got := strings.Join(p.ClientFlags("go", "-c", "1"), " "); got != "-c 1" {
		t.Errorf("go flags: got %q; want -c 1", got)
	}
	d := Programs{Docker: true, JavaOpts: []string{"-Xmx1g", "-XX:+UseSerialGC"}}
	srv := d.JavaServer("-proto", "ice")
	if strings.Join(srv.Args, " ") != "java-client serve -proto ice" || !slices.Equal(srv.Env, []string{"JAVA_OPTS=-Xmx1g -XX:+UseSerialGC"}) {
		t.Errorf("java server: got %q %q", srv.Args, srv.Env)
	}
	if g := d.GoServer("-x"); len(g.Env) != 0 || g.Image != "rpcbed/go:latest" {
		t.Errorf("go-server: got %q %q; want no JAVA_OPTS", g.Image, g.Env)
	}
}

func TestPHPFrontVariants(t *testing.T) {
	p := Programs{Root: "/r"}
	env := []string{"LISTEN=127.0.0.1:1"}
	pub, prod := p.PHPFront(env...), p.PHPFrontProduction(env...)
	if slices.Contains(pub.Env, FrontOpcache) {
		t.Errorf("published front: got env %q; want no %s", pub.Env, FrontOpcache)
	}
	if !slices.Contains(prod.Env, FrontOpcache) || !slices.Contains(prod.Env, env[0]) {
		t.Errorf("production front: got env %q; want %s and %s", prod.Env, FrontOpcache, env[0])
	}
	if len(env) != 1 {
		t.Errorf("PHPFrontProduction changed its caller's env: %q", env)
	}
}

func TestPlanListsPHPPureBesidePHP(t *testing.T) {
	s, err := plan.ParseSpec([]byte("clients: {java: [grpc], php-pure: [grpc, thrift], php: [grpc], go: [grpc]}\nitems: [200]\nconcurrency: [1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Plan() {
		got = append(got, c.Name())
	}
	want := "go-grpc-datalist-200-c1 php-grpc-datalist-200-c1 php-pure-grpc-datalist-200-c1 php-pure-thrift-datalist-200-c1 java-grpc-datalist-200-c1"
	if strings.Join(got, " ") != want {
		t.Errorf("got %s; want %s", strings.Join(got, " "), want)
	}
}
