package load

import (
	"context"
	"testing"
)

// BenchmarkCall is one caller's call through a real loopback connection to the
// in-process go-server, per protocol and call (client and server CPU together;
// allocations include the server's). `make bench-loadgen` compares the client
// alone with ghz and wrk.
func BenchmarkCall(b *testing.B) {
	addrs := goServer(b)
	for _, p := range protos {
		for _, call := range []string{CallDataType, CallDataList} {
			cfg := Config{Proto: p, Call: call, Concurrency: 1, Requests: 1, KeepAlive: true, Addr: addrs[p]}
			if call == CallDataList {
				cfg.Items = 200
			}
			b.Run(p+"-"+call, func(b *testing.B) {
				cfg.Defaults()
				t, err := dial(context.Background(), &cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer t.close()
				c := t.session(0)
				if o, _ := c.verify(context.Background()); o.kind != kindOK {
					b.Fatal(o.err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if o := c.call(context.Background()); o.kind != kindOK {
						b.Fatal(o.err)
					}
				}
			})
		}
	}
}
