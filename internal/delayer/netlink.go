package delayer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The nfnetlink_queue protocol, as linux/netfilter/nfnetlink_queue.h has it. Only
// what a delayer needs: bind a queue, copy a packet's first bytes, accept by id.
const (
	nfqnlMsgPacket       = 0
	nfqnlMsgVerdict      = 1
	nfqnlMsgConfig       = 2
	nfqaPacketHdr        = 1
	nfqaVerdictHdr       = 2
	nfqaTimestamp        = 4
	nfqaPayload          = 10
	nfqaCfgCmd           = 1
	nfqaCfgParams        = 2
	nfqaCfgQueueMaxlen   = 3
	nfqnlCfgCmdBind      = 1
	nfqnlCopyPacket      = 2
	nfAccept             = 1
	nlaHdrLen            = 4
	nfgenLen             = 4
	nlmsgAlign           = 4
	nlaTypeMask          = 0x3fff // NLA_F_NESTED and NLA_F_NET_BYTEORDER aside
	nfnlSubsysQueueShift = 8
)

func align(n int) int { return (n + nlmsgAlign - 1) &^ (nlmsgAlign - 1) }

// msgType is a queue message's nlmsg_type: the subsystem in the high byte.
func msgType(m int) uint16 { return uint16(unix.NFNL_SUBSYS_QUEUE<<nfnlSubsysQueueShift | m) }

// builder appends netlink messages to one buffer, so that many verdicts go to
// the kernel in one sendto.
type builder struct {
	b     []byte
	start int // the open message's offset
}

func (w *builder) begin(typ uint16, flags uint16, seq uint32, queue uint16) {
	w.start = len(w.b)
	var h [unix.SizeofNlMsghdr + nfgenLen]byte
	binary.NativeEndian.PutUint16(h[4:], typ)
	binary.NativeEndian.PutUint16(h[6:], flags)
	binary.NativeEndian.PutUint32(h[8:], seq)
	h[16] = unix.AF_UNSPEC
	h[17] = unix.NFNETLINK_V0
	binary.BigEndian.PutUint16(h[18:], queue)
	w.b = append(w.b, h[:]...)
}

func (w *builder) attr(typ uint16, v []byte) {
	var h [nlaHdrLen]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(nlaHdrLen+len(v)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	w.b = append(w.b, h[:]...)
	w.b = append(w.b, v...)
	for len(w.b)%nlmsgAlign != 0 {
		w.b = append(w.b, 0)
	}
}

func (w *builder) end() {
	binary.NativeEndian.PutUint32(w.b[w.start:], uint32(len(w.b)-w.start))
}

func (w *builder) reset() { w.b = w.b[:0] }

// verdict appends an NF_ACCEPT verdict for packet id.
func (w *builder) verdict(queue uint16, id uint32) {
	w.begin(msgType(nfqnlMsgVerdict), unix.NLM_F_REQUEST, 0, queue)
	var v [8]byte
	binary.BigEndian.PutUint32(v[0:], nfAccept)
	binary.BigEndian.PutUint32(v[4:], id)
	w.attr(nfqaVerdictHdr, v[:])
	w.end()
}

// packet is what the delayer reads of a queued packet: its id and its first
// bytes (the IP header and the ports).
type packet struct {
	id      uint32
	payload []byte
	// stampNs is the packet's arrival at the device (the kernel's receive
	// stamp, CLOCK_REALTIME ns; 0 without one): nfqnl_msg_packet_timestamp.
	stampNs int64
}

// parse reads the netlink messages of one datagram: queued packets go to fn, an
// error message (a refused config command) is returned.
func parse(b []byte, fn func(packet)) error {
	for len(b) >= unix.SizeofNlMsghdr {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return fmt.Errorf("netlink: message length %d of %d bytes", l, len(b))
		}
		body := b[unix.SizeofNlMsghdr:l]
		switch {
		case typ == unix.NLMSG_ERROR:
			if len(body) >= 4 {
				if errno := int32(binary.NativeEndian.Uint32(body)); errno != 0 {
					return unix.Errno(-errno)
				}
			}
		case typ == msgType(nfqnlMsgPacket) && len(body) >= nfgenLen:
			if p, ok := packetAttrs(body[nfgenLen:]); ok {
				fn(p)
			}
		}
		b = b[min(align(l), len(b)):]
	}
	return nil
}

// packetAttrs reads a packet message's attributes; ok is false without a header.
func packetAttrs(a []byte) (packet, bool) {
	var p packet
	ok := false
	for len(a) >= nlaHdrLen {
		l := int(binary.NativeEndian.Uint16(a[0:]))
		typ := binary.NativeEndian.Uint16(a[2:]) & nlaTypeMask
		if l < nlaHdrLen || l > len(a) {
			break
		}
		v := a[nlaHdrLen:l]
		switch typ {
		case nfqaPacketHdr:
			if len(v) >= 4 {
				p.id = binary.BigEndian.Uint32(v)
				ok = true
			}
		case nfqaPayload:
			p.payload = v
		case nfqaTimestamp:
			if len(v) >= 16 {
				sec, usec := int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
				p.stampNs = sec*1e9 + usec*1e3
			}
		}
		a = a[min(align(l), len(a)):]
	}
	return p, ok
}

// socket is a NETLINK_NETFILTER socket bound to one queue.
type socket struct {
	fd    int
	queue uint16
	seq   uint32
}

// openQueue opens the socket in the calling thread's network namespace and binds
// queue q, copying the first copyBytes of each packet, the kernel holding at most
// maxLen.
func openQueue(q uint16, copyBytes, maxLen uint32) (*socket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	s := &socket{fd: fd, queue: q}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		s.close()
		return nil, fmt.Errorf("netlink bind: %w", err)
	}
	// A deep receive buffer and no ENOBUFS: a burst waits in the socket rather
	// than failing the read; what the kernel could not queue it counts itself.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_NO_ENOBUFS, 1)

	var w builder
	s.seq++
	w.begin(msgType(nfqnlMsgConfig), unix.NLM_F_REQUEST|unix.NLM_F_ACK, s.seq, q)
	w.attr(nfqaCfgCmd, []byte{nfqnlCfgCmdBind, 0, 0, 0})
	w.end()
	if err := s.request(w.b); err != nil {
		s.close()
		return nil, fmt.Errorf("bind queue %d: %w (is another program bound to it?)", q, err)
	}
	w.reset()
	s.seq++
	w.begin(msgType(nfqnlMsgConfig), unix.NLM_F_REQUEST|unix.NLM_F_ACK, s.seq, q)
	var params [5]byte
	binary.BigEndian.PutUint32(params[0:], copyBytes)
	params[4] = nfqnlCopyPacket
	w.attr(nfqaCfgParams, params[:])
	var ml [4]byte
	binary.BigEndian.PutUint32(ml[:], maxLen)
	w.attr(nfqaCfgQueueMaxlen, ml[:])
	w.end()
	if err := s.request(w.b); err != nil {
		s.close()
		return nil, fmt.Errorf("configure queue %d: %w", q, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// request sends one config message and waits for its acknowledgement.
func (s *socket) request(b []byte) error {
	if err := unix.Sendto(s.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	for {
		n, _, err := unix.Recvfrom(s.fd, buf, 0)
		if err != nil {
			return err
		}
		acked := false
		err = parseAck(buf[:n], s.seq, &acked)
		if err != nil || acked {
			return err
		}
	}
}

// parseAck finds the acknowledgement of seq in a datagram.
func parseAck(b []byte, seq uint32, acked *bool) error {
	for len(b) >= unix.SizeofNlMsghdr {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return errors.New("netlink: short message")
		}
		if binary.NativeEndian.Uint16(b[4:]) == unix.NLMSG_ERROR && binary.NativeEndian.Uint32(b[8:]) == seq {
			*acked = true
			if errno := int32(binary.NativeEndian.Uint32(b[unix.SizeofNlMsghdr:])); errno != 0 {
				return unix.Errno(-errno)
			}
			return nil
		}
		b = b[min(align(l), len(b)):]
	}
	return nil
}

func (s *socket) send(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	for {
		err := unix.Sendto(s.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		if err == unix.EINTR {
			continue
		}
		return err
	}
}

func (s *socket) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}
