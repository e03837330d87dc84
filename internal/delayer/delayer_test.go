package delayer

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string // "" ok, else a word the error names
	}{
		{"plain", Config{Delay: time.Millisecond}, ""},
		{"jitter", Config{Delay: time.Millisecond, Jitter: 200 * time.Microsecond}, ""},
		{"zero", Config{}, ""},
		{"negative delay", Config{Delay: -1}, "delay"},
		{"negative jitter", Config{Delay: time.Millisecond, Jitter: -1}, "jitter"},
		{"jitter above delay", Config{Delay: time.Millisecond, Jitter: 2 * time.Millisecond}, "jitter"},
		{"too long", Config{Delay: time.Minute}, "delay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("got %v; want nil", err)
			case tc.want != "" && (err == nil || !contains(err.Error(), tc.want)):
				t.Fatalf("got %v; want an error naming %q", err, tc.want)
			}
		})
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func ipv4TCP(src, dst [4]byte, sport, dport uint16) []byte {
	b := make([]byte, 40)
	b[0] = 0x45
	b[9] = unix.IPPROTO_TCP
	copy(b[12:], src[:])
	copy(b[16:], dst[:])
	binary.BigEndian.PutUint16(b[20:], sport)
	binary.BigEndian.PutUint16(b[22:], dport)
	return b
}

func TestFlowOf(t *testing.T) {
	a := ipv4TCP([4]byte{198, 19, 250, 1}, [4]byte{198, 19, 250, 2}, 1000, 80)
	b := ipv4TCP([4]byte{198, 19, 250, 1}, [4]byte{198, 19, 250, 2}, 1001, 80)
	ka, ok := flowOf(a)
	if !ok || ka.sport != 1000 || ka.dport != 80 || ka.proto != unix.IPPROTO_TCP {
		t.Fatalf("got %+v %v; want sport 1000 dport 80 tcp", ka, ok)
	}
	kb, _ := flowOf(b)
	if ka == kb {
		t.Fatalf("two ports gave one flow")
	}
	v6 := make([]byte, 44)
	v6[0] = 0x60
	v6[6] = unix.IPPROTO_UDP
	v6[8], v6[24] = 0xfd, 0xfd
	binary.BigEndian.PutUint16(v6[40:], 53)
	if k, ok := flowOf(v6); !ok || k.sport != 53 || k.proto != unix.IPPROTO_UDP {
		t.Fatalf("ipv6: got %+v %v; want sport 53 udp", k, ok)
	}
	for _, short := range [][]byte{nil, {0x45}, {0x60, 0}, {0x15, 1, 2}} {
		if _, ok := flowOf(short); ok {
			t.Fatalf("flowOf(%x): got ok; want not ok", short)
		}
	}
}

// tcpSeq reads a data segment's sequence and length; arrivals counts a segment
// behind its flow's furthest (across the 2^32 wrap too), and nothing else.
func TestArrivalsBehind(t *testing.T) {
	seg := func(sport uint16, seq uint32, n int) []byte {
		b := ipv4TCP([4]byte{198, 19, 250, 1}, [4]byte{198, 19, 250, 2}, sport, 80)
		binary.BigEndian.PutUint16(b[2:], uint16(40+n))
		binary.BigEndian.PutUint32(b[24:], seq)
		b[32] = 5 << 4
		return b
	}
	if seq, n, ok := tcpSeq(seg(1, 7, 100)); !ok || seq != 7 || n != 100 {
		t.Fatalf("tcpSeq = %d, %d, %v; want 7, 100, true", seq, n, ok)
	}
	for _, b := range [][]byte{seg(1, 7, 0), seg(1, 7, 100)[:30], nil, {0x60}} {
		if _, _, ok := tcpSeq(b); ok {
			t.Fatalf("tcpSeq(%x): got ok; want not ok (no data, short, or not IPv4 TCP)", b)
		}
	}
	var wrap uint32 = 1<<32 - 50
	for _, c := range []struct {
		name   string
		segs   [][]byte
		behind uint64
	}{
		{"in order", [][]byte{seg(1, 0, 100), seg(1, 100, 100), seg(1, 200, 100)}, 0},
		{"swapped", [][]byte{seg(1, 0, 100), seg(1, 200, 100), seg(1, 100, 100)}, 1},
		{"repeated", [][]byte{seg(1, 0, 100), seg(1, 0, 100)}, 1},
		{"two flows interleaved", [][]byte{seg(1, 500, 100), seg(2, 0, 100), seg(1, 600, 100), seg(2, 100, 100)}, 0},
		{"across the wrap", [][]byte{seg(1, wrap, 100), seg(1, wrap+100, 100)}, 0},
		{"behind across the wrap", [][]byte{seg(1, wrap+100, 100), seg(1, wrap, 100)}, 1},
		{"acks only", [][]byte{seg(1, 900, 0), seg(1, 0, 0)}, 0},
	} {
		var a arrivals
		for _, b := range c.segs {
			k, _ := flowOf(b)
			a.see(k, b)
		}
		if a.behind != c.behind {
			t.Errorf("%s: %d behind; want %d", c.name, a.behind, c.behind)
		}
	}
}

// A flow's release times never go back, whatever the jitter draws: jitter must
// not reorder a TCP connection. Across flows they may.
func TestScheduleKeepsFlowOrder(t *testing.T) {
	s := newSchedule(Config{Delay: time.Millisecond, Jitter: 900 * time.Microsecond, Seed: 7})
	flows := []flowKey{{sport: 1}, {sport: 2}, {sport: 3}}
	last := map[flowKey]int64{}
	now := int64(0)
	for i := range 30000 {
		now += 5000 // a packet every 5 µs
		k := flows[i%len(flows)]
		d := s.due(k, now)
		if d < last[k] {
			t.Fatalf("packet %d of flow %v due at %d before its flow's previous %d", i, k, d, last[k])
		}
		if d < now {
			t.Fatalf("packet %d due at %d before it arrived at %d", i, d, now)
		}
		last[k] = d
	}
	if s.clamped == 0 {
		t.Fatalf("no packet was held back for its flow at a 5 µs spacing and ±900 µs jitter")
	}
	// Unclamped (a flow per packet), the draws span the jitter.
	spread := [2]int64{1 << 62, 0}
	for i := range 20000 {
		d := s.due(flowKey{sport: uint16(i), dport: 9}, 0)
		spread[0], spread[1] = min(spread[0], d), max(spread[1], d)
	}
	if spread[0] > int64(150*time.Microsecond) || spread[1] < int64(1800*time.Microsecond) {
		t.Fatalf("delays spanned [%v, %v]; want about [100µs, 1.9ms]", time.Duration(spread[0]), time.Duration(spread[1]))
	}
}

func TestScheduleNoJitterIsExact(t *testing.T) {
	s := newSchedule(Config{Delay: 250 * time.Microsecond})
	for now := int64(0); now < 1e6; now += 777 {
		if d := s.due(flowKey{}, now); d != now+250_000 {
			t.Fatalf("due(%d) = %d; want %d", now, d, now+250_000)
		}
	}
}

func TestScheduleForgetsIdleFlows(t *testing.T) {
	s := newSchedule(Config{Delay: time.Microsecond})
	for i := range maxFlows + 10 {
		s.due(flowKey{sport: uint16(i), dport: uint16(i >> 16)}, int64(i)*10_000)
	}
	if len(s.last) > maxFlows {
		t.Fatalf("flow table holds %d; want at most %d", len(s.last), maxFlows)
	}
}

// A verdict message as the builder writes it is the kernel's layout: nlmsghdr,
// nfgenmsg with the queue in network order, one NFQA_VERDICT_HDR attribute.
func TestVerdictLayout(t *testing.T) {
	var w builder
	w.verdict(3, 0x01020304)
	w.verdict(3, 7)
	if len(w.b) != 2*(16+4+4+8) {
		t.Fatalf("two verdicts are %d bytes; want %d", len(w.b), 2*32)
	}
	m := w.b[:32]
	if l := binary.NativeEndian.Uint32(m); l != 32 {
		t.Fatalf("nlmsg_len %d; want 32", l)
	}
	if typ := binary.NativeEndian.Uint16(m[4:]); typ != 3<<8|1 {
		t.Fatalf("type %#x; want %#x", typ, 3<<8|1)
	}
	if q := binary.BigEndian.Uint16(m[18:]); q != 3 {
		t.Fatalf("queue %d; want 3", q)
	}
	if v, id := binary.BigEndian.Uint32(m[24:]), binary.BigEndian.Uint32(m[28:]); v != nfAccept || id != 0x01020304 {
		t.Fatalf("verdict %d id %#x; want %d %#x", v, id, nfAccept, 0x01020304)
	}
}

// packetMsg is a queued-packet message as the kernel sends it.
func packetMsg(id uint32, payload []byte) []byte {
	var w builder
	w.begin(msgType(nfqnlMsgPacket), 0, 0, 0)
	var h [7]byte
	binary.BigEndian.PutUint32(h[:], id)
	w.attr(nfqaPacketHdr, h[:])
	w.attr(nfqaPayload, payload)
	w.end()
	return w.b
}

func TestParse(t *testing.T) {
	pl := ipv4TCP([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 9, 10)
	b := append(packetMsg(41, pl), packetMsg(42, pl[:21])...)
	var got []packet
	if err := parse(b, func(p packet) { got = append(got, p) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].id != 41 || got[1].id != 42 || len(got[0].payload) != 40 || len(got[1].payload) != 21 {
		t.Fatalf("got %+v; want ids 41 and 42 with 40 and 21 bytes", got)
	}
	// An error message is returned as its errno.
	e := make([]byte, 36)
	binary.NativeEndian.PutUint32(e, 36)
	binary.NativeEndian.PutUint16(e[4:], unix.NLMSG_ERROR)
	errno := -int32(unix.EPERM)
	binary.NativeEndian.PutUint32(e[16:], uint32(errno))
	if err := parse(e, func(packet) {}); err != unix.EPERM {
		t.Fatalf("got %v; want EPERM", err)
	}
	if err := parse([]byte{200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, func(packet) {}); err == nil {
		t.Fatalf("a length past the datagram: got nil; want an error")
	}
}

// The kernel's messages are outside input: no datagram makes parse panic or
// hand on a packet without a header.
func FuzzParse(f *testing.F) {
	f.Add(packetMsg(1, ipv4TCP([4]byte{1, 2, 3, 4}, [4]byte{5, 6, 7, 8}, 9, 10)))
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		var a arrivals
		_ = parse(b, func(p packet) {
			k, _ := flowOf(p.payload)
			a.see(k, p.payload)
		})
		var acked bool
		_ = parseAck(b, 1, &acked)
	})
}

// The kernel's arrival stamp (struct nfqnl_msg_packet_timestamp: seconds and
// microseconds, big-endian) is read; a short one is ignored.
func TestParseStamp(t *testing.T) {
	msg := func(stamp []byte) []byte {
		var w builder
		w.begin(msgType(nfqnlMsgPacket), 0, 0, 0)
		var h [7]byte
		binary.BigEndian.PutUint32(h[:], 7)
		w.attr(nfqaPacketHdr, h[:])
		w.attr(nfqaTimestamp, stamp)
		w.end()
		return w.b
	}
	ts := make([]byte, 16)
	binary.BigEndian.PutUint64(ts, 1_700_000_000)
	binary.BigEndian.PutUint64(ts[8:], 250_000)
	for _, tc := range []struct {
		name  string
		stamp []byte
		want  int64
	}{
		{"stamped", ts, 1_700_000_000*1e9 + 250_000*1e3},
		{"short", ts[:12], 0},
	} {
		var got packet
		if err := parse(msg(tc.stamp), func(p packet) { got = p }); err != nil {
			t.Fatal(err)
		}
		if got.id != 7 || got.stampNs != tc.want {
			t.Errorf("%s: id %d stamp %d; want 7 and %d", tc.name, got.id, got.stampNs, tc.want)
		}
	}
}

// The early wake-up is the p90 of the last 64 wake-ups' lateness, never more
// than MaxSpin, and forgets what is older.
func TestWakerSpin(t *testing.T) {
	var w waker
	if w.spin() != 0 {
		t.Fatalf("spin %d before any wake-up; want 0", w.spin())
	}
	for i := range 100 {
		w.record(int64(i%10+1) * 1000) // 1..10 µs
	}
	if got := w.spin(); got != 10_000 {
		t.Errorf("spin %d ns; want the p90, 10 µs", got)
	}
	for range 64 {
		w.record(int64(time.Second))
	}
	if got := w.spin(); got != int64(MaxSpin) {
		t.Errorf("spin %d ns after slow wake-ups; want MaxSpin", got)
	}
	for range 64 {
		w.record(-5)
	}
	if got := w.spin(); got != 0 {
		t.Errorf("spin %d ns after early wake-ups; want 0", got)
	}
}
