/* VXLAN port: one VNI on the underlay, and the UDP socket it shares.
 *
 * struct vxlan_sock is one UDP socket bound to (local IP, UDP port).  Every
 * vxlan port (VNI) with that local address and port shares it (reference
 * counted): the daemon polls the socket, reads datagrams with
 * vxlan_sock_rx_batch() and hands each to the vxlan port of its VNI.
 *
 * Receive: recvmmsg with UDP_GRO.  The kernel may hand back several
 * equal-size datagrams coalesced in one buffer, with their size in a
 * SOL_UDP/UDP_GRO cmsg; the buffer is cut back into datagrams here.  Each
 * datagram becomes a pkt that starts at the VXLAN header, with pkt->tunnel
 * (family, outer addresses, ports) filled in.  A TCP datagram's headers are
 * copied into the pkt's linear part and its payload is a frag pointing into
 * the receive buffer (which the frag keeps alive): no payload copy here.
 * Datagrams of a coalesced buffer carry ol.flags DATA_VALID: UDP GRO only
 * merges datagrams with a verified, non-zero UDP checksum, which covers the
 * inner frame (the kernel's vxlan trusts inner checksums the same way).
 *
 * Send: a frame with TSO metadata is cut by the software GSO
 * (offload/gso.h) into one train of VXLAN datagrams at one stride and sent
 * with UDP_SEGMENT (several sends in one sendmmsg when the train is larger
 * than a UDP datagram may be).  If the kernel refuses UDP_SEGMENT (EIO: the
 * egress device has no checksum offload; EINVAL) it is switched off,
 * counted, and the train is resent one datagram per message.  Frames
 * without TSO have their partial checksum completed, get a VXLAN header and
 * go out as one datagram each.
 *
 * Sends never block.  When the kernel pushes back (EAGAIN: the send buffer
 * is full; ENOBUFS) the messages not taken go, as copies, into the
 * socket's backlog: at most VXLAN_BACKLOG_MAX (256) messages and 4 MB of
 * UDP payload (a message is one datagram or one UDP_SEGMENT send of up to
 * 64 KB).  While the backlog is not empty the socket is "blocked": every
 * new message of any port on it goes behind the backlog, never before it
 * (no reordering), and what does not fit is dropped and counted on the
 * sending port as underlay_backlog_full (one per message) and in
 * tx_backlog_drops.  The worker asks epoll for EPOLLOUT on the fd while
 * vxlan_sock_tx_blocked() and calls vxlan_sock_tx_resume() when it comes;
 * nothing else drains the backlog.  The worker watches the receiving
 * socket only: while the message at the head of the backlog waits on
 * another send socket (srcport), EPOLLOUT of the receiving one says
 * nothing about it, and the worker retries each turn until it drains.
 *
 * Outer headers (struct vxlan_options; the settings belong to the socket,
 * so every port sharing one must agree: vxlan_sock_check_options()).
 *  - UDP source port: by default the socket's own port (dstport) on every
 *    datagram, which keeps every flow on one underlay path.  With a range
 *    (`srcport MIN-MAX`, at most VXLAN_SRCPORT_MAX_PORTS ports) the socket
 *    gets one send socket bound to (local, P) for each P of the range
 *    (SO_REUSEPORT; P == dstport uses the receiving socket itself), and a
 *    frame goes out on the one its inner-flow hash picks
 *    (vxlan_flow_hash() scaled into the range as the kernel's
 *    udp_flow_src_port()): a GSO train is one flow, so it stays one
 *    UDP_SEGMENT send.  A bound socket cannot change its port per send,
 *    hence the sockets.  Receiving stays on the dstport socket alone.
 *  - UDP checksum: computed by the kernel by default.  `udpcsum off` sets
 *    SO_NO_CHECK (IPv4) or UDP_NO_CHECK6_TX (IPv6) on the send sockets, and
 *    for IPv6 UDP_NO_CHECK6_RX on the receiving one: RFC 6935/6936 allow a
 *    zero UDPv6 checksum only for a tunnel both ends configured so, which
 *    is what the setting is.  The kernel refuses UDP_SEGMENT on such a
 *    socket (EINVAL, checked on 6.18): the first train is refused, counted
 *    (udp_segment_fallbacks) and resent one datagram per message, and
 *    UDP_SEGMENT stays off, as after any refusal.  Zero-checksum datagrams
 *    are never merged by the receiver's UDP GRO either.
 *  - IPv4 DF: `df set` (the default) is IP_MTU_DISCOVER IP_PMTUDISC_DO on
 *    the send sockets.  Without it (IP_PMTUDISC_WANT) the kernel clears
 *    DF on every UDP_SEGMENT send, whose skb is longer than the MTU.  DO,
 *    not PROBE: DO holds sends to the path MTU the kernel learns from ICMP
 *    and refuses larger ones (EMSGSIZE, counted as mtu_exceeded) where PROBE
 *    would send them with DF into a black hole.  `df unset` is
 *    IP_PMTUDISC_DONT: DF clear, and the kernel fragments what is larger
 *    than the path.  `df inherit` copies the inner packet's DF, as the
 *    kernel's vxlan does (inner IPv4: its DF; inner IPv6: set; anything
 *    else: clear): the option is per socket, not per packet, so the worker
 *    switches a send socket between DO and DONT before a send that needs
 *    the other (one setsockopt per change, sendmmsg runs cut there).  IPv6
 *    has no DF (routers never fragment): the grammar refuses `df` there.
 *
 * MTU.  The path MTU towards every remote is probed at open (IP_MTU of a
 * connected probe socket) and each frame is held to the one of the VTEP it
 * goes to (a destination that is not among the remotes: the smallest).
 * The inner limit towards a remote is the configured `mtu`, capped by what
 * fits its path (path MTU minus 50 bytes for IPv4, 70 for IPv6).  A TSO
 * frame whose segments would exceed it is cut smaller (TCP: a smaller
 * gso_size); a UDP_L4 one, whose segments are datagrams of their own, is
 * dropped as DROP_MTU_EXCEEDED.  A frame without GSO metadata larger than
 * the configured mtu (without one: than what fits the path) is dropped as
 * DROP_MTU_EXCEEDED; one between the path's fit and a larger configured
 * mtu is sent as the operator asked: fragmented by the kernel with `df
 * unset` (or an inner packet without DF under `df inherit`), refused by it
 * with DF set (EMSGSIZE: DROP_MTU_EXCEEDED).
 *
 * Threads (see port.h).  A vxlan port holds no datapath state: its send
 * queue, GSO header scratch and tx counters are in each worker's port_io.
 * A socket is different: its counters (struct vxlan_sock_stats) and its
 * receive buffers are written by the one worker that reads and sends on it,
 * and vxlan_sock_get_stats() is to be called on that worker.  With many
 * workers each has its own socket, a lane (below), and sends on it the
 * frames of its io (io->lane), so no socket is ever shared between
 * workers and none needs a lock.  The knobs (UDP_GRO, UDP_SEGMENT, our GSO) are
 * atomics the control thread may flip at any time; a worker reads them
 * once per batch or send (relaxed: they order nothing else).  Reference
 * counting (vxlan_sock_ref/unref) is the control thread's alone. */
#ifndef VX_PORT_VXLAN_H
#define VX_PORT_VXLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port/port.h"

enum vxlan_port_limits {
	VXLAN_MAX_REMOTES = 16,
	/* Ports of a `srcport` range: one send socket (fd, send buffer) each. */
	VXLAN_SRCPORT_MAX_PORTS = 64,
	/* Sockets of one (local, port), one per worker (vxlan_options.lanes). */
	VXLAN_MAX_LANES = 16,
};

/* The outer IPv4 DF bit (vxlan_options.df). */
enum vxlan_df {
	VXLAN_DF_SET = 0, /* the default */
	VXLAN_DF_UNSET,
	VXLAN_DF_INHERIT,
};

struct vxlan_addr {
	uint8_t family;    /* 4 or 6 */
	uint8_t bytes[16]; /* IPv4 in the first 4 bytes, rest zero */
};

/* ICMP errors the underlay socket's error queue gave back (IP_RECVERR),
 * by the address of the datagram's destination: a port unreachable is a
 * remote where nothing listens on our dstport. */
enum { VXLAN_ICMP_REMOTES = 8 };
struct vxlan_icmp_remote {
	struct vxlan_addr addr;
	uint64_t port_unreach;      /* ICMP/ICMPv6 port unreachable */
	uint64_t other;             /* other errors (host/net unreachable, frag needed, local) */
	int last_errno;
};

/* The underlay socket's summed counters, X(field, text, what): one list for
 * the struct, the sum over a port's lanes (dp/user/snapshot_sum.c) and
 * `vxctl stats` (report/stats_print.c: text " TEXT N" in this order, or
 * JSON only when TEXT is ""; JSON key: the field).  A counter of this
 * kind is added here, one line, and in docs/STATS.md. */
#define VXLAN_SOCK_COUNTERS(X) \
	X(rx_calls, "rx msgs", "recvmmsg messages returned") \
	X(rx_gro_buffers, "udp-gro msgs", "messages that carried > 1 datagram") \
	X(rx_datagrams, "datagrams", "datagrams received") \
	X(rx_no_buffer, "no buffer", "datagrams lost: pkt pool empty") \
	X(rx_queue_drops, "kernel rx-buffer drops", "dropped by the kernel: receive buffer full (SO_RXQ_OVFL)") \
	X(rx_zero_csum, "zero-csum", "with a zero outer UDP checksum (udp_zero_csum.h)") \
	X(rx_icmp_port_unreach, "icmp port-unreachable", "from the error queue, all remotes (vxlan_icmp.c)") \
	X(tx_sends, "tx sends", "messages handed to the kernel") \
	X(tx_gso_sends, "udp-segment sends", "of which with UDP_SEGMENT") \
	X(tx_datagrams, "datagrams", "datagrams on the wire (segments counted)") \
	X(tx_errors, "errors", "sends that failed") \
	X(rx_errors, "rx errors", "recvmmsg failures other than EAGAIN") \
	X(tx_backlogged, "backlogged", "messages put in the backlog") \
	X(tx_backlog_drops, "backlog drops", "messages dropped: backlog full") \
	X(tx_backlog_len, "backlog now", "messages in the backlog now (a gauge, summed)") \
	X(udp_segment_fallbacks, "udp-segment fallbacks", "sends resent without UDP_SEGMENT") \
	X(rx_icmp_errors, "", "every error the queue gave, port unreachable included") \
	X(tx_icmp_retries, "", "sends redone: an ICMP error had failed them (sk_err)") \
	X(rx_bytes, "", "UDP payload bytes received") \
	X(rx_too_short, "", "datagrams shorter than a VXLAN header") \
	X(tx_bytes, "", "UDP payload bytes sent") \
	X(tx_blocked_events, "", "times the backlog went from empty to not")

struct vxlan_sock_stats {
#define VXLAN_SOCK_FIELD(f, text, what) uint64_t f;
	VXLAN_SOCK_COUNTERS(VXLAN_SOCK_FIELD)
#undef VXLAN_SOCK_FIELD
	bool rx_zero_csum_counted;  /* the kernel took the counting filter (IPv4 sockets only) */
	unsigned n_icmp_remotes;
	struct vxlan_icmp_remote icmp_remotes[VXLAN_ICMP_REMOTES]; /* the first remotes seen */
	int last_rx_errno;
	int last_tx_errno;
	bool udp_gro_probed;        /* the kernel accepted UDP_GRO at open */
	bool udp_gro_on;
	bool udp_segment_probed;
	bool udp_segment_on;        /* off after a refusal, or by the knob */
};

struct vxlan_sock;
struct pkt_pool;

/* Opens a socket bound to local:port (port host order).  0 or -errno. */
int vxlan_sock_open(const struct vxlan_addr *local, uint16_t port, struct vxlan_sock **out);
void vxlan_sock_ref(struct vxlan_sock *sock);
/* Drops one reference; closes at zero.  NULL is a no-op. */
void vxlan_sock_unref(struct vxlan_sock *sock);
int vxlan_sock_fd(const struct vxlan_sock *sock);
bool vxlan_sock_matches(const struct vxlan_sock *sock, const struct vxlan_addr *local, uint16_t port);
/* Reads datagrams, returns how many pkts were stored in out (<= max): 0
 * when nothing is queued, a negative errno (counted in rx_errors) when
 * recvmmsg fails otherwise.  The socket keeps up to 8 receive buffers from
 * `pool` between calls, replacing only the ones filled, so a read that
 * finds nothing allocates nothing; they count in the pool's in_use.
 * Passing another pool gives the kept ones back first.  Worker only. */
int vxlan_sock_rx_batch(struct vxlan_sock *sock, struct pkt_pool *pool, struct pkt **out, unsigned max);
/* Gives the kept receive buffers back to their pool (before the pool is
 * destroyed, if the socket outlives it; the last unref does it too). */
void vxlan_sock_rx_release(struct vxlan_sock *sock);
/* Run-time knobs; switching on only works if the kernel accepted it at open. */
int vxlan_sock_set_udp_gro(struct vxlan_sock *sock, bool on);
void vxlan_sock_set_udp_segment(struct vxlan_sock *sock, bool on);
/* Counters and knobs.  Call it on the worker that reads and sends on the
 * socket (the counters are its plain writes). */
void vxlan_sock_get_stats(const struct vxlan_sock *sock, struct vxlan_sock_stats *out);
/* True while the send backlog is not empty: the worker then wants EPOLLOUT
 * on vxlan_sock_fd(). */
bool vxlan_sock_tx_blocked(const struct vxlan_sock *sock);
/* The fd whose writability the blocked backlog waits for: vxlan_sock_fd()
 * itself, or one of the srcport range's send sockets; -1 when not blocked.
 * The worker asks epoll for EPOLLOUT on this one, so a blocked send socket
 * of a range does not spin the worker on the (writable) receive socket. */
int vxlan_sock_tx_wait_fd(const struct vxlan_sock *sock);
/* On EPOLLOUT: sends the backlog in order.  0 when it is empty (drop
 * EPOLLOUT again), -EAGAIN when the kernel pushed back again (keep it).  A
 * message the kernel refuses outright is dropped and counted in tx_errors.
 * Worker only, like every send. */
int vxlan_sock_tx_resume(struct vxlan_sock *sock);
/* MTU of the route from the socket's address to `remote` (IP_MTU of a
 * connected probe socket); negative errno if there is no route. */
int vxlan_path_mtu(const struct vxlan_addr *local, const struct vxlan_addr *remote);

struct vxlan_options {
	uint32_t vni;
	struct vxlan_addr local;
	uint16_t dst_port;  /* 0: 4789 */
	struct vxlan_addr remotes[VXLAN_MAX_REMOTES];
	unsigned n_remotes;
	uint32_t mtu;       /* inner (VM-facing) MTU; 0: path MTU - encap, per remote */
	/* Outer headers (see the top); zero is the default of each. */
	bool udp_zero_csum; /* udpcsum off */
	uint8_t df;         /* enum vxlan_df; IPv4 only (IPv6: VXLAN_DF_SET) */
	uint16_t src_port_min, src_port_max; /* 0-0: dst_port on every datagram */
	/* Sockets to open for (local, dst_port): one per worker (0 or 1:
	 * one).  Not a setting of the tunnel: the daemon's. */
	unsigned lanes;
};

/* Opens a socket as vxlan_sock_open() does, with the outer-header settings
 * of `opts` (its local address; bound to `port`).  -EINVAL for settings
 * that cannot be honoured (df other than set over IPv6, a range over
 * VXLAN_SRCPORT_MAX_PORTS), -errno when a send socket cannot be had. */
int vxlan_sock_open_opts(const struct vxlan_options *opts, uint16_t port, struct vxlan_sock **out);

/* Lanes: many workers, one socket each.
 * With opts->lanes N > 1, vxlan_sock_open_opts() opens N sockets bound to
 * the same (local, port) with SO_REUSEPORT, and attaches to the group a
 * classic BPF program (SO_ATTACH_REUSEPORT_CBPF) that picks the socket of
 * each datagram from a hash of its flow (flow_lane.h): the inner IPv4 or
 * IPv6 addresses and, for TCP and UDP, ports, read behind the VXLAN
 * header; for any other inner frame (ARP, ...), the outer UDP source port
 * (which a peer sets from the inner flow's hash).  So every datagram of
 * one inner flow lands on one socket, read by one worker, in order,
 * whatever the peer's source port policy (vxswitch's default sends every
 * flow from its dstport).  The hash is symmetric and the same as the
 * tap's steering: both directions of a flow are one worker's.
 * The kernel falls back to its own 4-tuple hash if the program cannot
 * run.  Lane i is read and sent on only by worker i; the returned socket
 * is lane 0 and stands for the group (refcount, options, knobs). */
struct vxlan_sock *vxlan_sock_lane(struct vxlan_sock *sock, unsigned lane);
unsigned vxlan_sock_n_lanes(const struct vxlan_sock *sock);
/* The lane the steering program picks for a datagram whose UDP payload
 * (VXLAN header on) is `vx` and whose outer UDP source port is `sport`:
 * the same computation in C, for tests and for stats. */
unsigned vxlan_lane_pick(const uint8_t *vx, size_t len, uint16_t sport, unsigned n_lanes);
/* 0 if a port with `opts` can share `sock` (same udpcsum, df, srcport);
 * else -EINVAL and one line in why naming the setting that differs. */
int vxlan_sock_check_options(const struct vxlan_sock *sock, const struct vxlan_options *opts,
			     char *why, size_t size);
/* The settings `sock` was opened with (as vxlan_options fields; srcport
 * 0-0 when fixed). */
void vxlan_sock_get_options(const struct vxlan_sock *sock, struct vxlan_options *out);

struct vxlan_port_info {
	struct vxlan_sock *sock;
	uint32_t underlay_mtu;     /* smallest path MTU of the remotes */
	uint32_t inner_mtu_fit;    /* what fits: underlay_mtu - 50 or - 70 */
	/* Path MTU towards opts.remotes[i], probed at open (1500 where there
	 * was no route). */
	uint32_t remote_mtu[VXLAN_MAX_REMOTES];
	/* From the io passed to vxlan_port_get_info (0 without one): */
	uint64_t tx_gso_frames;    /* TSO frames segmented by our GSO */
	uint64_t tx_gso_segments;  /* segments they were cut into */
	uint64_t tx_plain_frames;  /* frames sent as one datagram */
};

/* Opens (or shares, via `sock` when non-NULL) the socket and creates the
 * port.  The port holds its own reference to the socket. */
int vxlan_port_open(const struct vxlan_options *opts, struct vxlan_sock *sock, struct port **out);
bool port_is_vxlan(const struct port *port);
struct vxlan_sock *vxlan_port_sock(const struct port *port);
const struct vxlan_options *vxlan_port_options(const struct port *port);
/* True when `addr` (family 4 or 6) is one of the port's remotes.  VXLAN has
 * no authentication: a datagram from anywhere else is refused by the
 * datapath (vxlan_unknown_remote) rather than let a host that can reach
 * the UDP port inject frames into a VNI and teach its FDB (docs/SECURITY.md).
 * Safe on any thread: the options are immutable once the port is open. */
bool vxlan_port_is_remote(const struct port *port, uint8_t family, const uint8_t *addr);
/* Settings, and the counters of one worker's `io` (NULL: they read as 0);
 * call it on the worker that owns `io`. */
void vxlan_port_get_info(const struct port *port, const struct port_io *io, struct vxlan_port_info *out);
/* Our GSO on/off.  Off: frames with TSO metadata are not segmented here but
 * dropped as DROP_GSO_UNSUPPORTED (the daemon also turns the taps' TSO off,
 * so the kernel segments before we read). */
void vxlan_port_set_gso(struct port *port, bool on);

/* The receive path's cut of one datagram, `dlen` bytes at `ofs` in the
 * receive buffer `buf` (headers of a TCP datagram copied, its payload left
 * in `buf` as a frag holding a reference; anything else copied), into the
 * fresh `pkt`; `coalesced`: it came in a UDP_GRO buffer, whose checksum
 * the kernel verified (ol DATA_VALID).  Pure: vxlan_sock_rx_batch() calls
 * it for every datagram, and fuzz/fuzz_vxlan_decap.c with outside bytes. */
void vxlan_rx_datagram(struct pkt *pkt, struct pkt *buf, uint32_t ofs, uint32_t dlen, bool coalesced);
/* The VNI in the VXLAN header at the start of `pkt` (no validation beyond
 * length); -1 if the pkt is shorter than a VXLAN header. */
int64_t vxlan_pkt_vni(const struct pkt *pkt);

#endif
