package cost

import "testing"

func TestLayers(t *testing.T) {
	l, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	goBin := "/work/bin/go-client"
	for _, tc := range []struct{ object, function, want string }{
		// Go client and server.
		{goBin, "google.golang.org/protobuf/internal/impl.(*MessageInfo).unmarshalPointerEager'2", LayerCodec},
		{goBin, "google.golang.org/protobuf/encoding/protowire.ConsumeBytes", LayerCodec},
		{goBin, "github.com/rpcbed/rpcbed/internal/gen/pb.(*Item).Reset", LayerCodec},
		{goBin, "github.com/rpcbed/rpcbed/internal/gen/thriftgen/data.(*DataList).Read", LayerCodec},
		{goBin, "github.com/apache/thrift/lib/go/thrift.(*TBinaryProtocol).ReadString", LayerCodec},
		{goBin, "github.com/apache/thrift/lib/go/thrift.(*TFramedTransport).Read", LayerRPC},
		{goBin, "encoding/json.(*decodeState).object", LayerCodec},
		{goBin, "unicode/utf8.Valid", LayerCodec},
		{goBin, "google.golang.org/grpc/internal/transport.(*http2Client).reader", LayerRPC},
		{goBin, "golang.org/x/net/http2.(*Framer).ReadFrame", LayerRPC},
		{goBin, "golang.org/x/net/http2/hpack.(*Decoder).Write", LayerRPC},
		{goBin, "net/http.ReadResponse", LayerRPC},
		{goBin, "internal/poll.(*FD).Read", LayerTransport},
		{goBin, "net.(*conn).Write", LayerTransport},
		{goBin, "syscall.Syscall", LayerTransport},
		{goBin, "internal/runtime/syscall.Syscall6", LayerTransport},
		{goBin, "runtime.netpoll", LayerTransport},
		{goBin, "runtime.mallocgc", LayerRuntime},
		{goBin, "runtime.scanobject", LayerGC},
		{goBin, "runtime.gcDrain", LayerGC},
		{goBin, "runtime.(*gcWork).tryGetObjFast", LayerGC},
		{goBin, "runtime.(*sweepLocked).sweep", LayerGC},
		{goBin, "runtime.scanSpan", LayerGC},
		{goBin, "runtime.wbBufFlush1", LayerGC},
		{goBin, "runtime.gcWriteBarrier2", LayerGC},
		{goBin, "runtime.typePointers.next", LayerGC},
		{goBin, "runtime.(*mspan).typePointersOfUnchecked", LayerGC},
		{goBin, "runtime.bgsweep", LayerGC},
		{goBin, "runtime.markBits.isMarked", LayerGC},
		{goBin, "runtime.(*mspan).heapBitsSmallForAddr", LayerGC},
		{goBin, "runtime.gcBgMarkWorker'2", LayerGC},
		// The allocator runs on every call: the runtime's, not the collector's.
		{goBin, "runtime.(*mcache).refill", LayerRuntime},
		{goBin, "runtime.(*mcentral).cacheSpan", LayerRuntime},
		{goBin, "runtime.(*mspan).nextFreeIndex", LayerRuntime},
		{goBin, "runtime.heapSetTypeNoHeader", LayerRuntime},
		{goBin, "runtime.typedmemmove", LayerRuntime},
		{goBin, "runtime.gcd", LayerRuntime},
		{goBin, "runtime.schedule", LayerRuntime},
		{goBin, "runtime.memmove", LayerRuntime},
		{goBin, "reflect.New", LayerRuntime},
		{goBin, "sync.(*Mutex).Lock", LayerRuntime},
		{goBin, "github.com/rpcbed/rpcbed/internal/load.(*grpcConn).call", LayerRpcbed},
		{goBin, "github.com/rpcbed/rpcbed/internal/service.(*Service).DataList", LayerRpcbed},
		{goBin, "github.com/HdrHistogram/hdrhistogram-go.(*Histogram).RecordValue", LayerBookkeeping},
		{goBin, "compress/flate.(*compressor).findMatch", LayerBookkeeping},
		{goBin, "encoding/base64.(*Encoding).Decode", LayerOther}, // the auth token, on every call: not bookkeeping
		// PHP and its extensions, by object.
		{"/work/php-client/ext/build/protobuf.so", "upb_Decoder_Decode", LayerCodec},
		{"/usr/lib/php/20220829/thrift_protocol.so", "binary_deserialize", LayerCodec},
		{"/work/php-client/ext/build/grpc.so", "zim_Call_startBatch", LayerRPC},
		{"/usr/lib/x86_64-linux-gnu/libgrpc.so.29", "grpc_call_start_batch", LayerRPC},
		{"/usr/lib/x86_64-linux-gnu/libabsl_synchronization.so.20220623", "absl::Mutex::Lock", LayerRPC},
		{"/usr/bin/php8.2", "php_json_parser_parse", LayerCodec},
		{"/usr/bin/php8.2", "php_stream_socket_read", LayerTransport},
		{"/usr/bin/php8.2", "zif_fwrite", LayerTransport},
		{"/usr/bin/php8.2", "execute_ex", LayerRuntime},
		{"/usr/bin/php8.2", "_emalloc_56", LayerRuntime},
		{"/usr/bin/php8.2", "zend_gc_collect_cycles", LayerGC},
		{"/usr/bin/php8.2", "gc_possible_root", LayerRuntime}, // on every refcount decrement: the mutator's
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "__libc_recv", LayerTransport},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "write", LayerTransport},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "__memmove_avx_unaligned_erms", LayerRuntime},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "_int_malloc", LayerRuntime},
		{"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "_dl_relocate_object", LayerRuntime},
		{"/usr/lib/x86_64-linux-gnu/libIce.so.37", "IceInternal::BasicStream::read", LayerRPC},
		{"/opt/unknown.so", "mystery", LayerOther},
	} {
		if got := l.Of(tc.object, tc.function); got != tc.want {
			t.Errorf("Of(%s, %s) = %s; want %s", tc.object, tc.function, got, tc.want)
		}
	}
	for _, r := range Rules {
		if _, ok := LayerNames[r.Layer]; !ok {
			t.Errorf("rule %q: layer %q has no name", r.Func+r.Object, r.Layer)
		}
		if r.Why == "" {
			t.Errorf("rule %q %q: no why", r.Object, r.Func)
		}
	}
	if _, err := NewLayers([]Rule{{Layer: LayerCodec, Func: "("}}); err == nil {
		t.Error("a bad pattern compiled")
	}
}

func TestAllocations(t *testing.T) {
	p := &Profile{Calls: map[string]uint64{
		Key("/bin/go-client", "runtime.mallocgc"):                 500,
		Key("/bin/go-client", "runtime.mallocgcTiny"):             300, // inside mallocgc: not counted again
		Key("/usr/bin/php8.2", "_emalloc_56"):                     20,
		Key("/usr/bin/php8.2", "_emalloc"):                        5,
		Key("/usr/bin/php8.2", "_safe_emalloc"):                   3, // ends in _emalloc
		Key("/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc"):      7,
		Key("/usr/lib/x86_64-linux-gnu/libc.so.6", "_int_malloc"): 7,
	}}
	if got := Allocations([]*Profile{p}); got != 532 {
		t.Errorf("Allocations = %v; want 532", got)
	}
}

func TestGCCycles(t *testing.T) {
	p := &Profile{Calls: map[string]uint64{
		Key("/bin/go-server", "runtime.gcMarkTermination"): 3,
		Key("/bin/go-server", "runtime.gcMarkDone"):        5, // may run more than once a cycle: not counted
		Key("/bin/go-server", "runtime.gcStart"):           4, // may return without starting one: not counted
		Key("/usr/bin/php8.2", "zend_gc_collect_cycles"):   2,
		Key("/usr/bin/php8.2", "gc_possible_root"):         900,
	}}
	if got := GCCycles([]*Profile{p, p}); got != 10 {
		t.Errorf("GCCycles = %v; want 10 (3 Go + 2 PHP cycles, twice)", got)
	}
}

// The collector's counts come apart from the rest, and the two add up to the
// total less the bookkeeping.
func TestCountedGCApart(t *testing.T) {
	l, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	p := &Profile{Events: []string{"Ir", "Dr"}, Self: map[string][]uint64{
		Key("/bin/go-server", "runtime.mallocgc"):                                                 {1000, 300},
		Key("/bin/go-server", "runtime.scanobject"):                                               {9000, 4000},
		Key("/bin/go-server", "runtime.gcBgMarkWorker'2"):                                         {500, 100},
		Key("/bin/go-client", "github.com/HdrHistogram/hdrhistogram-go.(*Histogram).RecordValue"): {70, 10},
		Key("/usr/bin/php8.2", "zend_gc_collect_cycles"):                                          {200, 50},
		Key("/usr/bin/php8.2", "execute_ex"):                                                      {4000, 900},
	}}
	c, gc, bk := l.Counted([]*Profile{p})
	if c.Ir != 5000 || c.Dr != 1200 {
		t.Errorf("counted Ir %v Dr %v; want 5000, 1200 (mallocgc + execute_ex)", c.Ir, c.Dr)
	}
	if gc.Ir != 9700 || gc.Dr != 4150 {
		t.Errorf("gc Ir %v Dr %v; want 9700, 4150", gc.Ir, gc.Dr)
	}
	if bk != 70 {
		t.Errorf("bookkeeping %v; want 70", bk)
	}
	short := Segment{Calls: 10, Counts: Counts{Ir: 1000}, GC: Counts{Ir: 0}}
	long := Segment{Calls: 20, Counts: Counts{Ir: 3000}, GC: Counts{Ir: 9000}}
	pc, err := Marginal(short, long)
	if err != nil {
		t.Fatal(err)
	}
	if pc.Ir != 200 || pc.GC.Ir != 900 || pc.WithGC().Ir != 1100 {
		t.Errorf("per call %v, gc %v, with gc %v; want 200, 900, 1100", pc.Ir, pc.GC.Ir, pc.WithGC().Ir)
	}
}

func TestCryptoRules(t *testing.T) {
	l, err := NewLayers(Rules)
	if err != nil {
		t.Fatal(err)
	}
	goBin := "/work/bin/go-server"
	for _, tc := range []struct{ object, function, want string }{
		{goBin, "crypto/tls.(*Conn).Read", LayerCrypto},
		{goBin, "crypto/tls.(*Conn).serverHandshake", LayerCrypto},
		{goBin, "crypto/aes.(*aesCipherGCM).Open", LayerCrypto},
		{goBin, "crypto/internal/fips140/aes/gcm.gcmAesEnc", LayerCrypto},
		{goBin, "crypto/internal/fips140/nistec.(*P256Point).ScalarMult", LayerCrypto},
		{goBin, "crypto/ecdh.(*nistCurve).ecdh", LayerCrypto},
		{goBin, "crypto/hmac.(*hmac).Sum", LayerCrypto}, // the auth token, every call
		{goBin, "crypto/sha256.(*Digest).Write", LayerCrypto},
		{goBin, "vendor/golang.org/x/crypto/chacha20poly1305.(*chacha20poly1305).open", LayerCrypto},
		{goBin, "encoding/base64.(*Encoding).Decode", LayerOther}, // not crypto
		{goBin, "runtime.memmove", LayerRuntime},
		{"/usr/lib/x86_64-linux-gnu/libssl.so.3", "SSL_write", LayerCrypto},
		{"/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "aesni_gcm_encrypt", LayerCrypto},
		{"/work/php-client/ext/build/grpc.so", "bssl::ssl_run_handshake", LayerCrypto},
		{"/work/php-client/ext/build/grpc.so", "ecp_nistz256_point_mul", LayerCrypto},
		{"/work/php-client/ext/build/grpc.so", "sha256_block_data_order_avx", LayerCrypto},
		{"/work/php-client/ext/build/grpc.so", "zim_Call_startBatch", LayerRPC},
		{"/usr/lib/x86_64-linux-gnu/libgrpc.so.29", "tsi_ssl_frame_protector_unprotect", LayerCrypto},
		{"/usr/lib/x86_64-linux-gnu/libgrpc.so.29", "grpc_call_start_batch", LayerRPC},
		{"/usr/lib/x86_64-linux-gnu/libIceSSL.so.37", "IceSSL::OpenSSL::TransceiverI::write", LayerCrypto},
		{"/usr/lib/x86_64-linux-gnu/libIce.so.37", "IceInternal::BasicStream::write", LayerRPC},
		{"/usr/lib/x86_64-linux-gnu/libcurl.so.4", "ossl_send", LayerCrypto},
		{"/usr/lib/x86_64-linux-gnu/libcurl.so.4", "Curl_http", LayerRPC},
		{"/usr/bin/php8.2", "php_openssl_sockop_io", LayerCrypto},
		{"/usr/bin/php8.2", "php_stream_socket_read", LayerTransport},
	} {
		if got := l.Of(tc.object, tc.function); got != tc.want {
			t.Errorf("Of(%s, %s) = %s; want %s", tc.object, tc.function, got, tc.want)
		}
	}
}
