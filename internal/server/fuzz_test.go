package server_test

import (
	"strconv"
	"testing"

	"github.com/rpcbed/rpcbed/internal/server"
)

func FuzzDataListQuery(f *testing.F) {
	for _, s := range []string{"n=2", "n=", "", "n=-1", "n=1&n=2", "n=%zz", "n=99999999999999999999", "a=b;c", "n=+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, err := server.DataListQuery(q)
		if err != nil {
			return
		}
		// Whatever parsed must be what the query said.
		if again, err := server.DataListQuery("n=" + strconv.Itoa(n)); err != nil || again != n {
			t.Fatalf("n=%d does not parse back: %d, %v", n, again, err)
		}
	})
}

func FuzzDataTypeQuery(f *testing.F) {
	for _, s := range []string{"groupName=USER_EVENT&enName=x", "groupName=%", "", "enName=&groupName="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		server.DataTypeQuery(q) // must not panic
	})
}
