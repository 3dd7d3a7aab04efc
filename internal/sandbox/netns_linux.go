//go:build linux

package sandbox

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// refuseEverywhere makes every IPv4 and IPv6 address local to this network
// namespace (a "local" route for 0.0.0.0/0 and ::/0 through lo, as `ip
// route add local 0.0.0.0/0 dev lo table local` does): a connection to an
// address outside, where no route led before (ENETUNREACH), now reaches the
// namespace's own loopback, where nothing listens on it, and is answered
// at once with a reset (ECONNREFUSED), as a refused connection is; a
// datagram gets a port unreachable (a name lookup fails at once). Nothing
// leaves the namespace either way. A family the kernel lacks here (IPv6
// disabled) keeps its ENETUNREACH.
func refuseEverywhere() error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	lo, err := ifIndex("lo")
	if err != nil {
		return err
	}
	var first error
	for i, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		// nlmsghdr, rtmsg, one attribute: the output interface.
		b := make([]byte, unix.NLMSG_HDRLEN+unix.SizeofRtMsg+unix.SizeofRtAttr+4)
		ne := binary.NativeEndian
		ne.PutUint32(b[0:], uint32(len(b)))
		ne.PutUint16(b[4:], unix.RTM_NEWROUTE)
		ne.PutUint16(b[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL)
		ne.PutUint32(b[8:], uint32(i+1))
		rt := b[unix.NLMSG_HDRLEN:]
		rt[0] = family // family; dst_len, src_len, tos 0: the whole space
		rt[4] = unix.RT_TABLE_LOCAL
		rt[5] = unix.RTPROT_BOOT
		rt[6] = unix.RT_SCOPE_HOST
		rt[7] = unix.RTN_LOCAL
		at := rt[unix.SizeofRtMsg:]
		ne.PutUint16(at[0:], unix.SizeofRtAttr+4)
		ne.PutUint16(at[2:], unix.RTA_OIF)
		ne.PutUint32(at[4:], uint32(lo))
		if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
			return err
		}
		ack := make([]byte, 4096)
		n, _, err := unix.Recvfrom(fd, ack, 0)
		if err != nil {
			return err
		}
		if n >= unix.NLMSG_HDRLEN+4 && ne.Uint16(ack[4:]) == unix.NLMSG_ERROR {
			if errno := int32(ne.Uint32(ack[unix.NLMSG_HDRLEN:])); errno != 0 && first == nil && family == unix.AF_INET {
				first = fmt.Errorf("route every IPv4 address to lo: %w", unix.Errno(-errno))
			}
		}
	}
	return first
}

func ifIndex(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, err
	}
	return int(ifr.Uint32()), nil
}

// refusalWatch opens, in the network namespace, a packet socket on lo that
// receives only the first packet (SYN without ACK) of each TCP connection
// to an address that is not loopback: a raw connection the command tried
// past the proxy, which refuseEverywhere answers with ECONNREFUSED. The
// proxy outside reads it and logs the refusal, so that a raw connection is
// shown like a refused CONNECT. Each packet is seen as it arrives on lo
// (the copy leaving is filtered out); only headers are kept.
func refusalWatch() (int, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return -1, err
	}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &unix.SockFprog{Len: uint16(len(synFilter)), Filter: &synFilter[0]}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("filter: %w", err)
	}
	lo, err := ifIndex("lo")
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: lo}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	// What arrived before the filter was attached and bound is dropped.
	buf := make([]byte, 256)
	for {
		if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	return fd, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// synFilter is the classic BPF program of refusalWatch. A packet socket of
// type SOCK_DGRAM sees each packet from its network header.
var synFilter = func() []unix.SockFilter {
	const (
		ldw  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		ldb  = unix.BPF_LD | unix.BPF_B | unix.BPF_ABS
		ldbi = unix.BPF_LD | unix.BPF_B | unix.BPF_IND
		msh  = unix.BPF_LDX | unix.BPF_B | unix.BPF_MSH
		and  = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// the packet's type (SKF_AD_OFF + SKF_AD_PKTTYPE)
		pkttype = 0xfffff000 + 4
	)
	type ins struct {
		code   uint16
		k      uint32
		jt, jf string
		label  string
	}
	prog := []ins{
		{code: ldw, k: pkttype},
		{code: jeq, k: unix.PACKET_OUTGOING, jt: "drop"},
		{code: ldb, k: 0},
		{code: and, k: 0xf0},
		{code: jeq, k: 0x40, jf: "v6"},
		// IPv4: TCP, not to 127/8, SYN without ACK
		{code: ldb, k: 9},
		{code: jeq, k: unix.IPPROTO_TCP, jf: "drop"},
		{code: ldb, k: 16},
		{code: jeq, k: 127, jt: "drop"},
		{code: msh, k: 0},
		{code: ldbi, k: 13},
		{code: and, k: 0x12},
		{code: jeq, k: 0x02, jt: "keep", jf: "drop"},
		// IPv6: TCP as the next header, not to ::1, SYN without ACK
		{label: "v6", code: jeq, k: 0x60, jf: "drop"},
		{code: ldb, k: 6},
		{code: jeq, k: unix.IPPROTO_TCP, jf: "drop"},
		{code: ldw, k: 24},
		{code: jeq, k: 0, jf: "flags6"},
		{code: ldw, k: 28},
		{code: jeq, k: 0, jf: "flags6"},
		{code: ldw, k: 32},
		{code: jeq, k: 0, jf: "flags6"},
		{code: ldw, k: 36},
		{code: jeq, k: 1, jt: "drop"},
		{label: "flags6", code: ldb, k: 40 + 13},
		{code: and, k: 0x12},
		{code: jeq, k: 0x02, jt: "keep", jf: "drop"},
		{label: "keep", code: ret, k: 128},
		{label: "drop", code: ret, k: 0},
	}
	at := map[string]int{}
	for i, in := range prog {
		if in.label != "" {
			at[in.label] = i
		}
	}
	jump := func(from int, to string) uint8 {
		if to == "" {
			return 0
		}
		return uint8(at[to] - from - 1)
	}
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = unix.SockFilter{Code: in.code, K: in.k, Jt: jump(i, in.jt), Jf: jump(i, in.jf)}
	}
	return out
}()
