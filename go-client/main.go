// Command go-client is rpcbed's Go load client (internal/load) and its Go HTTP
// front (`go-client front`, internal/front). Run `go-client -h` for flags and exit
// codes.
package main

import (
	"os"

	"github.com/rpcbed/rpcbed/internal/front"
	"github.com/rpcbed/rpcbed/internal/load"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "front" {
		os.Exit(front.Main(os.Args[2:], os.Stderr))
	}
	os.Exit(load.Main(os.Args[1:], os.Stdout, os.Stderr))
}
