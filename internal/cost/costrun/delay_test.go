package costrun

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestDelayProxy: what the measured side reads arrives d late, the other
// direction at once, a reply of many chunks d late in all (not d per chunk).
func TestDelayProxy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan time.Time, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			return
		}
		got <- time.Now()
		for i := 0; i < 20; i++ { // a reply in 20 writes
			if _, err := c.Write([]byte("0123456789")); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		c.Write([]byte("\n"))
	}()
	const d = 60 * time.Millisecond
	for _, toServer := range []bool{false, true} {
		p, err := startDelayProxy(ln.Addr().String(), d, toServer)
		if err != nil {
			t.Fatal(err)
		}
		if toServer {
			go func() { // a second server connection for the second proxy
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				r := bufio.NewReader(c)
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				got <- time.Now()
				c.Write([]byte("ok\n"))
			}()
		}
		c, err := net.Dial("tcp", p.addr())
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		if _, err := c.Write([]byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		arrived := <-got
		reply, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		up, down := arrived.Sub(t0), back.Sub(arrived)
		if toServer {
			if up < d || down > d {
				t.Errorf("toServer: request took %v (want >= %v), reply %v (want < %v)", up, d, down, d)
			}
		} else {
			if up > d || down < d || down > 10*d { // 20 chunks each d late would take 20*d
				t.Errorf("to the client: request took %v (want < %v), reply %v (want %v..%v)", up, d, down, d, 10*d)
			}
			if len(reply) != 201 {
				t.Errorf("reply %d bytes; want 201", len(reply))
			}
		}
		c.Close()
		p.close()
	}
}
