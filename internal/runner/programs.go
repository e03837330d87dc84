package runner

import "path/filepath"

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

// Image is the runtime image of a client (go|php|java); "" for an unknown one.
func Image(client string) string {
	switch client {
	case "go":
		return ImageGo
	case "php":
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
	}
	return nil
}

// LocalClientCommand is ClientCommand for the Local runner, in the checkout at root
// once `make build` (bin/go-client), php-client/build-ext.sh and the Java build ran.
func LocalClientCommand(root, client string) []string {
	switch client {
	case "go":
		return []string{filepath.Join(root, "bin", "go-client")}
	case "php":
		return []string{filepath.Join(root, "php-client", "bin", "php-client")}
	case "java":
		return []string{"java", "-jar", filepath.Join(root, "java-client", "target", "java-client.jar")}
	}
	return nil
}
