package plan

import (
	"strconv"
	"time"
)

// ClientRun is what a load client's command line says beyond its cell: the
// load, where it dials, and what a run path sets for itself. The matrix's
// cells, a capacity search's runs and a cost cell's client all take their
// flags from it (Cell.ClientArgs), so that a condition of a cell (its
// security, its connection mode) reaches every one of them.
type ClientRun struct {
	Load Load
	Addr string
	// Callers is -c when it is not the cell's concurrency (a verify's one
	// caller); 0: the cell's.
	Callers int
	// Rate is an open loop's calls a second (-rate); 0: a closed loop.
	Rate int
	// Timeout is a call's bound (-timeout); 0: the client's default.
	Timeout time.Duration
	// CA is the file of the CA that signed a TLS server's certificate, Cert and
	// Key the client's own of an mtls cell: a TLS cell's flags are given only
	// with CA (a TLS cell without it runs as its server allows).
	CA, Cert, Key string
	// ServerName is the name the client checks the server's certificate for
	// (-servername); "": the host of Addr.
	ServerName string
	// StartAt is -start-at: when the measured window opens (or the warm-up
	// ends, if later), on the client host's clock; zero: when the warm-up ends.
	StartAt time.Time
}

// ClientArgs are the flags every rpcbed client takes (go-client's, the same in
// PHP and Java: docs/clients.md) for one run of c.
func (c Cell) ClientArgs(r ClientRun) []string {
	l := r.Load
	args := []string{"-proto", c.Protocol, "-call", c.Call}
	if c.Call == "datalist" {
		args = append(args, "-items", strconv.Itoa(c.Items))
	}
	callers := c.Concurrency
	if r.Callers > 0 {
		callers = r.Callers
	}
	args = append(args, "-c", strconv.Itoa(callers))
	if l.N > 0 {
		args = append(args, "-n", strconv.FormatInt(l.N, 10))
	}
	if l.Duration > 0 {
		args = append(args, "-t", Seconds(l.Duration.D()))
	}
	switch {
	case l.Warmup.IsAuto():
		args = append(args, "-warmup", "auto", "-warmup-max", Seconds(l.WarmupBound()))
	case l.Warmup > 0:
		args = append(args, "-warmup", Seconds(l.Warmup.D()))
	}
	args = append(args, "-conns", strconv.Itoa(l.ConnsFor(c.Concurrency)))
	if r.Timeout > 0 {
		args = append(args, "-timeout", Seconds(r.Timeout))
	}
	if c.Protocol == "http" && c.Connect != PerCall {
		args = append(args, "-k")
	}
	if c.Connect == PerCall {
		args = append(args, "-connect", PerCall)
	}
	if r.Rate > 0 {
		args = append(args, "-rate", strconv.Itoa(r.Rate))
	}
	args = append(args, "-addr", r.Addr)
	if !r.StartAt.IsZero() {
		args = append(args, "-start-at", strconv.FormatFloat(float64(r.StartAt.UnixMicro())/1e6, 'f', 6, 64))
	}
	return append(args, c.securityArgs(r)...)
}

// securityArgs are a TLS cell's flags: -security, -cacert, the mtls
// certificate, -servername, -tls-version and -resume.
func (c Cell) securityArgs(r ClientRun) []string {
	s := c.Sec()
	if !s.IsTLS() || r.CA == "" {
		return nil
	}
	a := []string{"-security", s.Mode, "-cacert", r.CA}
	if s.Mode == MTLS {
		a = append(a, "-cert", r.Cert, "-key", r.Key)
	}
	if r.ServerName != "" {
		a = append(a, "-servername", r.ServerName)
	}
	if s.TLS12 {
		a = append(a, "-tls-version", "1.2")
	}
	if s.Resume != "" {
		a = append(a, "-resume", s.Resume)
	}
	return a
}

// Seconds is d as a client's duration flag takes it: seconds with an "s" ("1.5s").
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// RunTimeout bounds one client run of l: its Timeout, else its planned time
// plus room for start-up.
func (l Load) RunTimeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout.D()
	}
	if l.Duration > 0 {
		return l.WarmupBound() + l.Duration.D() + 60*time.Second
	}
	return l.WarmupBound() + 120*time.Second
}
