package server_test

import (
	"fmt"
	"testing"
)

// BenchmarkCall measures one call per protocol x call through a real loopback
// connection (client and server in this process, so it is the sum of both).
func BenchmarkCall(b *testing.B) {
	s := start(b, true)
	cs := callers(b, s)
	for _, p := range protos {
		c := cs[p]
		b.Run(p+"-datatype", func(b *testing.B) {
			b.ReportAllocs()
			tok := ""
			for i := 0; i < b.N; i++ {
				r := c.dataType("bench", tok, group, en)
				if r.code != 0 {
					b.Fatalf("code %d", r.code)
				}
				tok = r.token
			}
		})
		for _, n := range []int{2, 200, 5000} {
			b.Run(fmt.Sprintf("%s-datalist-%d", p, n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if r := c.dataList("bench", "", n); r.items != n {
						b.Fatalf("%d items; want %d", r.items, n)
					}
				}
			})
		}
	}
}
