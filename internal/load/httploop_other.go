//go:build !linux

package load

import "errors"

// Elsewhere than Linux load-generator mode on HTTP runs on net/http's codec.
const loopSupported = false

type httpLoops struct{ loops []struct{} }

func newHTTPLoops(*Config, []*caller, int64, string) (*httpLoops, error) {
	return nil, errors.New("no event loop on this system")
}
func (*httpLoops) run(*loopRun)      {}
func (*httpLoops) close()            {}
func (*httpLoops) placement() string { return "" }
func (*httpLoops) pinErr() error     { return nil }
