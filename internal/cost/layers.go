package cost

import (
	"path"
	"regexp"
	"strings"
)

// The layers a call's instructions are split into (docs/cost.md, "Where the cost
// goes"). Kernel work is not among them: callgrind sees user space only.
const (
	LayerCodec     = "codec"     // protobuf, upb, Thrift protocols, JSON
	LayerRPC       = "rpc"       // grpc-go, gRPC core, the Thrift, HTTP and Ice runtimes
	LayerCrypto    = "crypto"    // TLS: Go's crypto/*, OpenSSL, BoringSSL inside gRPC core, IceSSL, PHP's and curl's TLS glue
	LayerTransport = "transport" // sockets, the poller, system-call wrappers
	LayerRuntime   = "runtime"   // GC, scheduler, allocator, memory copies, the PHP interpreter
	LayerRpcbed    = "rpcbed"    // rpcbed's own code: the client's loop and check, the server's service
	LayerOther     = "other"     // matched by no rule
	// LayerGC is the garbage collector's own work (Go's mark, sweep, scavenger,
	// assists and write-barrier buffers; the Zend engine's cycle collection). It
	// is counted apart from the instructions per call and reported beside them
	// (PerCall.GC): a Go collection marks the whole heap at a moment its pacer
	// picks from timing, so a window holds a cycle (about 9 M instructions on
	// go-server's heap) or not, and the figure with it does not reproduce
	// (docs/cost.md, "The garbage collector, apart").
	LayerGC = "gc"
	// LayerBookkeeping is left out of every per-call figure: the client's own
	// latency histogram, whose percentile walk at report time costs more or less
	// with the latencies' range (a few million instructions, different in every
	// run: under callgrind that is the noise of the marginal method).
	LayerBookkeeping = "bookkeeping"
)

// LayerOrder is the order of the layers in every table and plot. The first seven
// add up to the instructions per call; LayerGC comes on top of them (apart).
var LayerOrder = []string{LayerCodec, LayerRPC, LayerCrypto, LayerTransport, LayerRuntime, LayerRpcbed, LayerOther, LayerGC}

// LayerNames are the layers' names in tables and legends.
var LayerNames = map[string]string{
	LayerCodec:     "codec",
	LayerRPC:       "RPC runtime",
	LayerCrypto:    "crypto (TLS)",
	LayerTransport: "transport + syscalls",
	LayerRuntime:   "language runtime",
	LayerRpcbed:    "rpcbed's check/service",
	LayerOther:     "other",
	LayerGC:        "garbage collector (apart)",

	LayerBookkeeping: "rpcbed's latency histogram (left out)",
}

// Rule maps functions to a layer: Object is a path.Match pattern on the object
// file's base name ("" = any), Func a regular expression on the function's name
// (its callgrind recursion or context suffix such as '2 removed; "" = any).
type Rule struct {
	Layer  string
	Object string
	Func   string
	Why    string
}

// Rules is the table every cost run uses, first match wins. PHP code itself
// (the pure-PHP runtimes, the Grpc\ and Thrift\ libraries, rpcbed's check) runs
// inside the interpreter's handlers and lands in "runtime": callgrind sees C
// functions, not PHP ones.
var Rules = []Rule{
	// Go: rpcbed's own packages.
	{LayerCodec, "", `^github\.com/rpcbed/rpcbed/internal/gen/`, "generated protobuf and Thrift code"},
	{LayerRpcbed, "", `^github\.com/rpcbed/rpcbed/`, "the client's loop and check, the server's service, auth, store"},
	// Go: codecs.
	{LayerCodec, "", `^google\.golang\.org/protobuf/`, "protobuf-go"},
	{LayerCodec, "", `^github\.com/apache/thrift/lib/go/thrift\.\(\*T(Binary|Compact|JSON|SimpleJSON)Protocol\)`, "Thrift's protocols"},
	{LayerCodec, "", `^github\.com/apache/thrift/lib/go/thrift\.(NewTBinaryProtocol|NewTCompactProtocol|readByte|bool2Byte)`, "Thrift's protocols"},
	{LayerCodec, "", `^(encoding/json|encoding/binary|unicode/utf8|unicode/utf16|unicode|strconv)\.`, "JSON, UTF-8 checks, number formats"},
	// Go: RPC runtimes.
	{LayerRPC, "", `^google\.golang\.org/grpc`, "grpc-go"},
	{LayerRPC, "", `^golang\.org/x/net/(http2|idna|trace|internal)`, "HTTP/2 and HPACK"},
	{LayerRPC, "", `^github\.com/apache/thrift/`, "Thrift's client, server and transports"},
	{LayerRPC, "", `^(net/http|net/textproto|net/url|mime|vendor/golang\.org/x/net/http)`, "net/http"},
	// Go: cryptography, before the runtime's catch-all (which lists crypto):
	// TLS's handshake and records, the ciphers, hashes and curves under them,
	// and the auth token's HMAC-SHA256 that go-server checks on every call.
	{LayerCrypto, "", `^(crypto/|vendor/golang\.org/x/crypto/|golang\.org/x/crypto/)`, "Go's crypto/tls, crypto/aes, crypto/cipher, crypto/ecdh, crypto/internal/*, crypto/hmac and crypto/sha256 (the auth token), x/crypto"},
	// Go: transport and system calls.
	{LayerTransport, "", `^(net|internal/poll|syscall|internal/syscall/unix|os)\.`, "sockets and files"},
	{LayerTransport, "", `^(internal/runtime/syscall|runtime/internal/syscall)\.`, "raw system calls"},
	{LayerTransport, "", `^runtime\.(netpoll|poll_runtime|entersyscall|exitsyscall|reentersyscall|read|write|write1|epoll)`, "the netpoller, system-call entry and exit"},
	{LayerTransport, "", `^(internal/poll|net)\.`, "sockets"},
	// Go: the collector (runtime/mgc*.go, mwbbuf.go, the scanning half of
	// mbitmap.go), before the runtime's catch-all. The allocator (mallocgc, the
	// mcache and mcentral refills) stays in the runtime: it runs on every call.
	{LayerGC, "", goGC, "Go's garbage collector: mark, sweep, scavenger, assists, write-barrier buffers, its pacer"},
	{LayerRuntime, "", `^(runtime|reflect|sync|internal/|sort|slices|maps|strings|bytes|math|time|context|errors|fmt|bufio|io|hash|crypto|container|iter|weak|unique|log)[./]`, "Go's runtime and standard library: GC, scheduler, allocator, copies"},
	{LayerRuntime, "", `^(type:|go:|gosave|callRet|aeshash|memeqbody|cmpbody|indexbytebody|countbody)`, "Go's compiler-made and assembly helpers"},
	{LayerRpcbed, "", `^main\.`, "go-server's and go-client's main"},
	{LayerBookkeeping, "", `^github\.com/HdrHistogram/`, "the client's latency histogram: rpcbed's bookkeeping, not the call, and its report-time walk varies run to run"},
	{LayerBookkeeping, "", `^(compress/flate|compress/zlib)\.`, "the client's report deflates its latency histogram once at the end, at a cost that varies with the latencies: bookkeeping (no measured call compresses; base64 is not here: the auth token is base64 on every call)"},
	// PHP and C libraries: by object file.
	{LayerCodec, "protobuf.so", "", "Google's protobuf C extension (upb inside)"},
	{LayerCodec, "thrift_protocol.so", "", "php-thrift's accelerator"},
	{LayerCodec, "libupb*", "", "upb"},
	{LayerCodec, "libprotobuf*", "", "protobuf C++"},
	{LayerCodec, "php*", `^(php_json_|zif_json_|php_next_utf8_char|php_escape_html|smart_str_append_double)`, "PHP's JSON"},
	// TLS in C and C++: OpenSSL, and BoringSSL where gRPC core carries it
	// inside its own library (the PHP extension built from source links it in:
	// by function name), gRPC core's TLS glue (tsi, its security handshaker),
	// IceSSL, curl's and PHP's OpenSSL glue. Before the objects' own rules.
	{LayerCrypto, "libssl*", "", "OpenSSL's TLS"},
	{LayerCrypto, "libcrypto*", "", "OpenSSL's ciphers, hashes and curves"},
	{LayerCrypto, "libgnutls*", "", "GnuTLS"},
	{LayerCrypto, "libnettle*", "", "Nettle (under GnuTLS)"},
	{LayerCrypto, "libhogweed*", "", "Nettle's public-key half (under GnuTLS)"},
	{LayerCrypto, "libIceSSL*", "", "IceSSL"},
	{LayerCrypto, "grpc.so", boringSSL, "BoringSSL and gRPC core's TLS, inside the gRPC extension"},
	{LayerCrypto, "libgrpc*", boringSSL, "BoringSSL and gRPC core's TLS, inside gRPC core"},
	{LayerCrypto, "libcurl*", `^(Curl_ssl|Curl_ossl|ossl_|Curl_tls|Curl_vtls)`, "curl's TLS glue (vtls)"},
	{LayerCrypto, "php*", `^(php_openssl_|zif_openssl_|php_stream_ssl|php_ssl)`, "PHP's OpenSSL streams"},
	{LayerCrypto, "openssl.so", "", "PHP's OpenSSL extension"},
	{LayerRPC, "grpc.so", "", "the gRPC extension"},
	{LayerRPC, "libgrpc*", "", "gRPC core"},
	{LayerRPC, "libgpr*", "", "gRPC core"},
	{LayerRPC, "libaddress_sorting*", "", "gRPC core"},
	{LayerRPC, "libabsl*", "", "Abseil (under gRPC core)"},
	{LayerRPC, "libcares*", "", "c-ares (under gRPC core)"},
	{LayerRPC, "libre2*", "", "RE2 (under gRPC core)"},
	{LayerRPC, "libz.so*", "", "zlib (under gRPC core)"},
	{LayerRPC, "libstdc++*", "", "the C++ library (under gRPC core, Ice)"},
	{LayerRPC, "ice.so", "", "php-zeroc-ice (Ice marshalling inside)"},
	{LayerRPC, "libIce*", "", "Ice (marshalling inside)"},
	{LayerRPC, "libcurl*", "", "libcurl"},
	{LayerTransport, "php*", `^(php_stream_|_php_stream_|php_sockop_|php_network_|php_poll|php_select|zif_stream_|zif_fread|zif_fwrite|zif_fgets|zif_socket_|zif_fflush|sapi_cli_)`, "PHP's streams and sockets"},
	{LayerTransport, "libc.so*", `^(__GI_)?(__libc_)?(read|write|readv|writev|recv|send|recvfrom|sendto|recvmsg|sendmsg|poll|ppoll|select|pselect|epoll_|connect|accept|socket|setsockopt|getsockopt|shutdown|close|fcntl|ioctl|__poll|__select|__read|__write|__recv|__send|__close|syscall)`, "system-call wrappers"},
	{LayerRuntime, "libc.so*", "", "libc: malloc, memcpy, string functions"},
	{LayerRuntime, "libm.so*", "", "libm"},
	{LayerRuntime, "ld-linux*", "", "the dynamic loader"},
	{LayerGC, "php*", `^(zend_gc_collect_cycles|zend_gc_remove_root_tmpvars|gc_possible_root_when_full|gc_mark_grey|gc_mark_roots|gc_scan|gc_scan_black|gc_scan_roots|gc_collect_white|gc_collect_roots|gc_remove_nested_data_from_buffer|gc_add_garbage|gc_grow_root_buffer|gc_compact|gc_adjust_threshold)$`, "the Zend engine's cycle collector (a collection, run when its root buffer fills)"},
	{LayerRuntime, "php*", "", "the PHP interpreter: it runs the PHP code too (pure-PHP runtimes, Grpc\\ and Thrift\\ libraries, the check)"},
	{LayerRuntime, "ctype.so", "", "PHP's ctype"},
	{LayerRuntime, "opcache.so", "", "OPcache"},
	{LayerRuntime, "libjvm.so", "", "the JVM"},
	{LayerRuntime, "vgpreload*", "", "valgrind's preload (malloc replacements)"},
}

// boringSSL matches BoringSSL's functions and gRPC core's TLS by name, where
// they are linked into gRPC's own library: BoringSSL's C API (SSL_, EVP_, BN_
// ...), its internals (bssl::, the assembly's aes_hw_, gcm_, sha256_block_
// ...), gRPC's transport security interface (tsi_) and its SSL and TLS
// credentials and handshaker.
const boringSSL = `^(bssl::|SSL_|ssl_|tls1?3?_|dtls1_|EVP_|evp_|EC_|ec_|ecp_nistz256|p256_|BN_|bn_|RSA_|rsa_|ECDSA_|ecdsa_|X509|x509|ASN1_|asn1_|CBB_|CBS_|CRYPTO_|OPENSSL_|ERR_|aes_|AES_|vpaes_|bsaes_|gcm_|GCM|ChaCha20|chacha|CRYPTO_poly1305|poly1305|x25519|X25519|SHA(1|224|256|384|512)|sha(1|256|512)_block|HMAC|hmac_|HKDF|hkdf|MD5|md5_|RAND_|rand_|tsi_|grpc_ssl|grpc_tls|grpc_core::(SecurityHandshaker|Ssl|Tls|TlsChannel|SslChannel|TlsServer|SslServer))`

// goGC matches Go's collector by name: the functions of runtime/mgc*.go,
// mwbbuf.go and the scanning and write-barrier half of mbitmap.go (Go 1.26,
// Green Tea's span scanning included).
const goGC = `^runtime\.(` +
	`gc[A-Z][A-Za-z0-9_]*|gcmarknewobject|gcenable|gcinit|gcWriteBarrier[0-9A-Za-z_]*|` +
	`\(\*(gcWork|gcControllerState|gcCPULimiterState|sweepLocked|sweepLocker|activeSweep|sweepClass|scavengerState|scavengeIndex|spanQueue|spanSPMC|spanInlineMarkBits|spanScanOwnership|wbBuf|workbuf|stackScanState|limiterEvent|piController|gcBits|lfstack)\)\.[A-Za-z0-9_]+|` +
	`\(\*pageAlloc\)\.scavenge[A-Za-z]*|\(\*mheap\)\.nextSpanForSweep|` +
	`\(\*mspan\)\.(ensureSwept|markBitsForIndex|markBitsForBase|inlineMarkBits|initInlineMarkBits|moveInlineMarks|scannedBitsForIndex|reportZombies|typePointersOf[A-Za-z]*|heapBitsSmallForAddr)|` +
	`\(\*markBits\)\.[A-Za-z]+|markBits\.[A-Za-z]+|typePointers\.[A-Za-z]+|\(\*typePointers\)\.[A-Za-z]+|objptr\.[A-Za-z]+|spanInlineMarkBitsFromBase|extractHeapBitsSmall|` +
	`scanobject|scanObject[A-Za-z]*|scanSpan|scanblock|scanstack|scanframeworker|scanConservative|greyobject|shade|markroot[A-Za-z]*|` +
	`sweepone|bgsweep|bgscavenge|finishsweep_m|deductSweepCredit|clearpools|wbBufFlush1?|wbMove|wbZero|bulkBarrierPreWrite[A-Za-z]*|` +
	`tryDeferToSpanScan|getempty|putempty|putfull|trygetfull|handoff|freeSomeWbufs|prepareFreeWorkbufs|findObject|heapBitsSmallForAddr|` +
	`spanSetScans|pollFractionalWorkerExit|setGCPhase|forEachP|stopTheWorldWithSema|startTheWorldWithSema` +
	`)$`

type compiledRule struct {
	Rule
	re *regexp.Regexp
}

// Layers assigns functions to layers by a rule table.
type Layers struct {
	rules []compiledRule
	memo  map[string]string
}

// NewLayers compiles rules; a bad pattern is an error that names the rule.
func NewLayers(rules []Rule) (*Layers, error) {
	l := &Layers{memo: map[string]string{}}
	for _, r := range rules {
		c := compiledRule{Rule: r}
		if r.Func != "" {
			re, err := regexp.Compile(r.Func)
			if err != nil {
				return nil, &RuleError{Rule: r, Err: err}
			}
			c.re = re
		}
		if _, err := path.Match(r.Object, ""); err != nil {
			return nil, &RuleError{Rule: r, Err: err}
		}
		l.rules = append(l.rules, c)
	}
	return l, nil
}

// RuleError is a rule that does not compile.
type RuleError struct {
	Rule Rule
	Err  error
}

func (e *RuleError) Error() string {
	return "layer rule " + e.Rule.Layer + " " + e.Rule.Object + " " + e.Rule.Func + ": " + e.Err.Error()
}

var recursionSuffix = regexp.MustCompile(`'[0-9]+$`)

// Of is the layer of a function in an object file (a full path or a base name).
func (l *Layers) Of(object, function string) string {
	k := Key(object, function)
	if v, ok := l.memo[k]; ok {
		return v
	}
	base := path.Base(object)
	fn := recursionSuffix.ReplaceAllString(function, "")
	if i := strings.Index(fn, "'"); i > 0 && strings.Contains(fn[i:], "'") {
		// callgrind's context separation prints caller'callee chains: the function is the first.
		fn = fn[:i]
	}
	out := LayerOther
	for _, r := range l.rules {
		if r.Object != "" {
			if ok, _ := path.Match(r.Object, base); !ok {
				continue
			}
		}
		if r.re != nil && !r.re.MatchString(fn) {
			continue
		}
		out = r.Layer
		break
	}
	l.memo[k] = out
	return out
}

// Counted sums the profiles' self costs of every function outside
// LayerBookkeeping and LayerGC, and gives the collector's counts and the
// bookkeeping's instructions apart. Self costs add up to a file's total
// (callgrind's invariant, TestParseGolden), so c + gc is the files' totals less
// the bookkeeping.
func (l *Layers) Counted(profiles []*Profile) (c, gc Counts, bookkeeping float64) {
	for _, p := range profiles {
		idx := make([]int, len(eventNames))
		for i, name := range eventNames {
			idx[i] = -1
			for j, e := range p.Events {
				if e == name {
					idx[i] = j
				}
			}
		}
		for k, v := range p.Self {
			obj, fn := SplitKey(k)
			f := c.fields()
			switch l.Of(obj, fn) {
			case LayerBookkeeping:
				if idx[0] >= 0 {
					bookkeeping += float64(v[idx[0]])
				}
				continue
			case LayerGC:
				f = gc.fields()
			}
			for i, j := range idx {
				if j >= 0 {
					*f[i] += float64(v[j])
				}
			}
		}
	}
	return c, gc, bookkeeping
}

// Split sums the profiles' self instructions (Ir) by layer.
func (l *Layers) Split(profiles []*Profile) map[string]float64 {
	out := map[string]float64{}
	for _, p := range profiles {
		ir := -1
		for i, e := range p.Events {
			if e == "Ir" {
				ir = i
			}
		}
		if ir < 0 {
			continue
		}
		for k, v := range p.Self {
			obj, fn := SplitKey(k)
			out[l.Of(obj, fn)] += float64(v[ir])
		}
	}
	return out
}

// allocators are the allocation entry points, one allocation per call made to
// them: Go's mallocgc, the Zend allocator's _emalloc and its size-specialised
// _emalloc_N (_safe_emalloc and _ecalloc end in _emalloc, __zend_malloc in
// malloc: not counted twice), libc's malloc and calloc.
var allocators = regexp.MustCompile(`^(runtime\.mallocgc|_emalloc|_emalloc_[0-9a-z]+|malloc|calloc)('[0-9]+)?$`)

// Allocations counts the calls made to the allocators (including the many
// size-specialised _emalloc_N of the Zend allocator), over every profile.
func Allocations(profiles []*Profile) float64 {
	var n float64
	for _, p := range profiles {
		for k, c := range p.Calls {
			_, fn := SplitKey(k)
			if allocators.MatchString(fn) {
				n += float64(c)
			}
		}
	}
	return n
}

// gcCycleEnds are the functions called once at the end of every collection
// cycle: Go's gcMarkTermination, the Zend engine's cycle collector
// (zend_gc_collect_cycles, run when its root buffer fills).
var gcCycleEnds = regexp.MustCompile(`^(runtime\.gcMarkTermination|zend_gc_collect_cycles)('[0-9]+)?$`)

// GCCycles counts the garbage-collection cycles the profiles ran: the calls to
// gcCycleEnds.
func GCCycles(profiles []*Profile) float64 {
	var n float64
	for _, p := range profiles {
		for k, c := range p.Calls {
			_, fn := SplitKey(k)
			if gcCycleEnds.MatchString(fn) {
				n += float64(c)
			}
		}
	}
	return n
}
