package costrun

import (
	"context"
	"io"
	"net"
	"sync"
	"time"
)

// delayProxy stands between the measured side and its native peer on loopback
// and hands the measured side what its peer wrote d after the peer wrote it
// (the other direction passes at once). Without it, whether a reply is already
// there when the slow side under callgrind reads depends on how fast the two
// sides ran: the measured side then blocks (netpoll, scheduler, futex: a few
// thousand instructions) on some calls and not on others, a different number in
// every run. With the reply always later than the read, the measured side
// always waits for it, as it does on a real network.
type delayProxy struct {
	ln     net.Listener
	target string
	d      time.Duration
	// toServer delays the client's bytes (the server side is measured);
	// otherwise the server's bytes are delayed (the client side is measured).
	toServer bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startDelayProxy(target string, d time.Duration, toServer bool) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, target: target, d: d, toServer: toServer}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *delayProxy) addr() string { return p.ln.Addr().String() }

func (p *delayProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 30*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		fromClient, fromServer := time.Duration(0), p.d
		if p.toServer {
			fromClient, fromServer = p.d, 0
		}
		p.wg.Add(2)
		go func() { defer p.wg.Done(); pipe(s, c, fromClient) }()
		go func() { defer p.wg.Done(); pipe(c, s, fromServer) }()
	}
}

// close stops the proxy and every connection through it.
func (p *delayProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// pipe copies src to dst, each chunk written d after it was read (chunks keep
// their order and are not held up by each other: a reply of many chunks arrives
// d late, not d per chunk). When src ends, dst's write side is closed.
func pipe(dst, src net.Conn, d time.Duration) {
	defer func() {
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		} else {
			dst.Close()
		}
	}()
	if d <= 0 {
		_, _ = io.Copy(dst, src)
		return
	}
	type chunk struct {
		b  []byte
		at time.Time
	}
	ch := make(chan chunk, 4096)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer close(ch)
		for {
			b := make([]byte, 64<<10)
			n, err := src.Read(b)
			if n > 0 {
				select {
				case ch <- chunk{b[:n], time.Now().Add(d)}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range ch {
		if w := time.Until(c.at); w > 0 {
			time.Sleep(w)
		}
		if _, err := dst.Write(c.b); err != nil {
			cancel()
			src.Close()
			for range ch {
			}
			return
		}
	}
}
