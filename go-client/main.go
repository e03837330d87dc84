// Command go-client is rpcbed's Go load client and its Go HTTP front; the engine
// is internal/load. Run `go-client -h` for flags and exit codes.
package main

import (
	"os"

	"github.com/rpcbed/rpcbed/internal/load"
)

func main() {
	os.Exit(load.Main(os.Args[1:], os.Stdout, os.Stderr))
}
