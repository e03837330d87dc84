// Package report is the seam between every load client and the matrix: one value,
// written in Apache Bench 2.3's layout plus an rpcbed block (docs/report-format.md),
// and parsed back from real ab output or any rpcbed client's output.
package report

// Report is what one load run measured. Field names follow ab's labels; JSON tags
// are the names the matrix and `rpcbed parse` use.
type Report struct {
	ServerSoftware string `json:"server_software"`
	ServerHostname string `json:"server_hostname"`
	ServerPort     int    `json:"server_port"`
	DocumentPath   string `json:"document_path"`
	DocumentLength int64  `json:"document_length"`
	// VariableLength is ab -l's "Document Length: Variable"; DocumentLength is 0 then.
	VariableLength bool `json:"variable_length"`

	Concurrency      int      `json:"concurrency"`
	TimeTakenSeconds float64  `json:"time_taken_s"`
	Complete         int64    `json:"complete"`
	Failed           int64    `json:"failed"`
	FailedBy         Failures `json:"failed_by"`
	WriteErrors      int64    `json:"write_errors"` // ab's "Write errors:", printed only when > 0
	KeepAlive        int64    `json:"keep_alive"`
	Non2xx           int64    `json:"non_2xx"`
	TotalTransferred int64    `json:"total_transferred"`
	HTMLTransferred  int64    `json:"html_transferred"`

	RequestsPerSecond   float64 `json:"requests_per_second"`
	TimePerRequestMs    float64 `json:"time_per_request_ms"`     // mean
	TimePerRequestAllMs float64 `json:"time_per_request_all_ms"` // mean, across all concurrent requests
	TransferRateKBps    float64 `json:"transfer_rate_kbps"`

	Connect    ConnRow `json:"connect"`
	Processing ConnRow `json:"processing"`
	Waiting    ConnRow `json:"waiting"`
	Total      ConnRow `json:"total"`

	// Percentiles holds ab's table: 50 66 75 80 90 95 98 99 100, in whole ms.
	// Empty when ab printed no table (fewer than two complete requests).
	Percentiles []Percentile `json:"percentiles"`

	// Rpcbed is the rpcbed block; nil for plain ab output.
	Rpcbed *Extra `json:"rpcbed,omitempty"`
}

// Failures is ab's "(Connect: , Receive: , Length: , Exceptions: )" breakdown.
type Failures struct {
	Connect    int64 `json:"connect"`
	Receive    int64 `json:"receive"`
	Length     int64 `json:"length"`
	Exceptions int64 `json:"exceptions"`
}

// ConnRow is one row of ab's "Connection Times (ms)" table.
type ConnRow struct {
	Min    int64   `json:"min"`
	Mean   int64   `json:"mean"`
	SD     float64 `json:"sd"`
	Median int64   `json:"median"`
	Max    int64   `json:"max"`
}

// Percentile is one row of ab's "served within a certain time" table.
type Percentile struct {
	Percent int   `json:"percent"`
	Ms      int64 `json:"ms"`
}

// Extra is the rpcbed block: the facts ab has no line for.
type Extra struct {
	Client            string  `json:"client"`   // go|php|java
	Protocol          string  `json:"protocol"` // grpc|thrift|http|ice|dubbo
	Call              string  `json:"call"`     // datatype|datalist
	Items             int     `json:"items"`
	Connections       int     `json:"connections"`
	SharedConnections bool    `json:"shared_connections"`
	Loop              string  `json:"loop"` // closed|open
	TargetRate        int     `json:"target_rate"`
	WarmupSeconds     float64 `json:"warmup_s"`
	WarmupCalls       int64   `json:"warmup_calls"`

	P50Us  int64   `json:"p50_us"`
	P90Us  int64   `json:"p90_us"`
	P99Us  int64   `json:"p99_us"`
	P999Us int64   `json:"p999_us"`
	MeanUs float64 `json:"mean_us"`
	MaxUs  int64   `json:"max_us"`

	CPUUserSeconds   float64 `json:"cpu_user_s"`
	CPUSystemSeconds float64 `json:"cpu_system_s"`

	Errors   map[string]int64  `json:"errors,omitempty"`
	Versions map[string]string `json:"versions,omitempty"`

	// Report v1.1 (docs/method.md). A v1.0 report leaves them empty; Parse takes
	// all six or none, and Write prints them when any is set.
	Check         string  `json:"check,omitempty"`          // full|length
	Runtime       string  `json:"runtime,omitempty"`        // go|jvm|c|pure
	CPUScope      string  `json:"cpu_scope,omitempty"`      // window|process
	WindowStart   float64 `json:"window_start_s,omitempty"` // Unix seconds, microsecond resolution
	WindowEnd     float64 `json:"window_end_s,omitempty"`
	WarmupSettled string  `json:"warmup_settled,omitempty"` // yes|no|fixed

	// JITCompileMs is the JIT compilers' compile time within the window, in
	// milliseconds ("JIT compile:", java-client only; nil when the report has none).
	JITCompileMs *int64 `json:"jit_compile_ms,omitempty"`

	// LatencyHistogram is the client's latency record ("Latency histogram:"):
	// every answered measured call, in microseconds, as HdrHistogram's V2
	// compressed encoding in base64 (internal/stats: DecodeLatency, MergeLatency).
	// Empty for ab and for reports written before the line existed.
	LatencyHistogram string `json:"latency_histogram,omitempty"`

	// TLS is what the client negotiated ("TLS:" and "TLS handshakes:", both or
	// neither; written only when TLS was used).
	TLS *TLS `json:"tls,omitempty"`
	// ConnectionsOpened is the connections the client opened in the window
	// ("Connections opened:", written with -connect per-call; nil without).
	ConnectionsOpened *int64 `json:"connections_opened,omitempty"`
}

// TLS is a client's negotiated TLS: the "TLS:" line (version, cipher suite, key
// exchange group, ALPN; "-" where the client's library cannot tell, "none" for
// no ALPN) and the "TLS handshakes:" line (completed in the window, and of them
// resumed).
type TLS struct {
	Version     string `json:"version"`      // TLSv1.3
	CipherSuite string `json:"cipher_suite"` // TLS_AES_128_GCM_SHA256
	Group       string `json:"group"`        // X25519
	ALPN        string `json:"alpn"`         // h2, http/1.1, none
	Handshakes  int64  `json:"handshakes"`
	Resumed     int64  `json:"resumed"`
}

// V11 tells whether x carries the report v1.1 keys.
func (x *Extra) V11() bool {
	return x.Check != "" || x.Runtime != "" || x.CPUScope != "" ||
		x.WindowStart != 0 || x.WindowEnd != 0 || x.WarmupSettled != ""
}

// Values the v1.1 keys take (docs/report-format.md).
const (
	CheckFull   = "full"
	CheckLength = "length"

	ScopeWindow  = "window"
	ScopeProcess = "process"

	SettledYes   = "yes"
	SettledNo    = "no"
	SettledFixed = "fixed"
)

// The exit codes every rpcbed client shares (docs/report-format.md): the Go
// client returns them, the driver reads them.
const (
	ExitOK          = 0 // report printed (even with failures)
	ExitInternal    = 1 // the report could not be written, or the client itself failed
	ExitUsage       = 2 // bad arguments
	ExitVerify      = 3 // the verify call's answer was wrong: no report
	ExitUnreachable = 4 // no connection before timing: no report
)
