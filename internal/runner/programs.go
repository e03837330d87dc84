package runner

import (
	"fmt"
	"path/filepath"
)

// The runtime images docker/images.sh builds, and where they keep each program:
//
//	rpcbed/go    /usr/local/bin/go-server, /usr/local/bin/go-client
//	rpcbed/php   /opt/rpcbed/php-client/bin/client.php, php-client on PATH
//	rpcbed/java  /opt/rpcbed/java-client.jar, java-client on PATH
//
// Each is also tagged with the hash of its inputs; :latest is the last one built.
const (
	ImageGo   = "rpcbed/go"
	ImagePHP  = "rpcbed/php"
	ImageJava = "rpcbed/java"
)

// Image is the runtime image of a client (go|php|php-pure|java); "" for an unknown one.
func Image(client string) string {
	switch client {
	case "go":
		return ImageGo
	case "php", "php-pure":
		return ImagePHP
	case "java":
		return ImageJava
	}
	return ""
}

// ClientCommand is the load client's command in its image: the same flags follow
// for every client (-proto -call -items -c -n -addr ...).
func ClientCommand(client string) []string {
	switch client {
	case "go", "php", "java":
		return []string{client + "-client"}
	case "php-pure":
		return []string{"php-client", "-runtime", "pure"}
	}
	return nil
}

// LocalClientCommand is ClientCommand for the Local runner, in the checkout at root
// once `make build`, php-client/build-ext.sh and the Java build ran. go-client is
// looked up on Local.Path, then PATH (New puts root/bin first).
func LocalClientCommand(root, client string) []string {
	switch client {
	case "go":
		return []string{"go-client"}
	case "php":
		return []string{filepath.Join(root, "php-client", "bin", "php-client")}
	case "php-pure":
		return []string{filepath.Join(root, "php-client", "bin", "php-client"), "-runtime", "pure"}
	case "java":
		return []string{"java", "-jar", filepath.Join(root, "java-client", "target", "java-client.jar")}
	}
	return nil
}

// Command is the Spec's Image and the start of its Args for one of rpcbed's
// programs under r: the load clients "go", "php", "php-pure", "java" (flags follow), and the
// servers "go-server" and "java-server" (= java-client serve; -proto and -port
// follow). root is the checkout, for the Local runner.
func Command(r Runner, root, prog string) (image string, args []string, err error) {
	switch r.(type) {
	case *Docker:
		switch prog {
		case "go-server":
			return ImageGo, []string{"go-server"}, nil
		case "java-server":
			return ImageJava, []string{"java-client", "serve"}, nil
		}
		if c := ClientCommand(prog); c != nil {
			return Image(prog), c, nil
		}
	case *Local:
		switch prog {
		case "go-server":
			return "", []string{"go-server"}, nil
		case "java-server":
			return "", append(LocalClientCommand(root, "java"), "serve"), nil
		}
		if c := LocalClientCommand(root, prog); c != nil {
			return "", c, nil
		}
	default:
		return "", nil, fmt.Errorf("runner %T: no programs known", r)
	}
	return "", nil, fmt.Errorf("unknown program %q (want go|php|java|go-server|java-server)", prog)
}

// New picks the runner: Docker when an engine answers, otherwise Local over the
// checkout at root. why says which, and why, for the run's log.
func New(root string) (r Runner, why string) {
	d, err := NewDocker()
	if err == nil {
		return d, "containers (Docker engine answers)"
	}
	return &Local{Path: []string{filepath.Join(root, "bin")}}, "local processes: " + err.Error()
}
