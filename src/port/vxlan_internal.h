/* Private to src/port/vxlan_*.c: the socket and port structures the three
 * files share.
 *
 *   vxlan_sock.c  the socket: open, knobs, stats, path MTU probes, receive
 *   vxlan_backlog.c  the socket's send backlog (sends the kernel pushed back)
 *   vxlan_txsock.c  the socket's send sockets and outer-header settings
 *                 (udpcsum, df, srcport): which one a frame takes, DF
 *   vxlan_port.c  the port: open, info, per-worker io, per-remote MTUs
 *   vxlan_tx.c    the send path: GSO trains, plain frames, sendmmsg
 *
 * Who writes what (see port.h and vxlan.h): fields marked "control" are
 * changed by the control thread only; "atomic" ones by either thread and
 * read by both; "worker" ones only by the one worker that reads and sends
 * on the socket.  Everything else is set at open and read-only after. */
#ifndef VX_PORT_VXLAN_INTERNAL_H
#define VX_PORT_VXLAN_INTERNAL_H

#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "offload/gso.h"
#include "offload/vxlan_encap.h"
#include "port/udp_zero_csum.h"
#include "port/vxlan.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum vxlan_sock_limits {
	VXLAN_RX_BURST = 8,            /* recvmmsg messages per call */
	VXLAN_SOCK_BUF = 8 << 20,      /* SO_RCVBUF / SO_SNDBUF */
	/* Bounds of the send backlog (vxlan.h): messages, and UDP payload
	 * bytes of them.  256 messages are 4 ms of 64 KB trains at 30 Gbit/s,
	 * which is what a send buffer that was full may take to drain. */
	VXLAN_BACKLOG_MAX = 256,
	VXLAN_BACKLOG_BYTES = 4 << 20,
};

/* One message the kernel would not take yet.  It owns a copy of its bytes
 * (headers and payload): the queue's iovecs point into per-call header
 * scratch and into frames whose pins on receive buffers (one per datagram
 * a GRO'd frame was merged from) would starve the pkt pool if kept. */
struct vxlan_backlog_entry {
	struct sockaddr_storage name;
	socklen_t namelen;
	uint32_t len;        /* UDP payload bytes of the message */
	uint32_t sent;       /* of which on the wire already (datagram by datagram) */
	uint16_t gso_size;   /* datagram size of a train; 0: one datagram */
	uint8_t tx_idx;      /* send socket (vxlan_sock.tx_fd) */
	bool df;             /* DF wanted (df inherit) */
	bool zero_csum;      /* outer UDP checksum zero (the frame's tunnel_key) */
	uint8_t data[];
};

struct vxlan_sock {
	int fd;
	unsigned refcnt;               /* control (lane 0's counts for all) */
	/* The lanes (vxlan_lanes.c): lane[0] is this socket; lanes 1.. are
	 * the other sockets of its reuseport group, one per worker, each
	 * with its own send sockets, backlog, buffers and counters.  Only
	 * lane 0's list is filled (a lane's own says 1, itself). */
	unsigned n_lanes;
	struct vxlan_sock *lane[VXLAN_MAX_LANES];
	struct vxlan_addr local;
	uint16_t port;
	bool udp_gro_probed, udp_segment_probed;
	/* Knobs: the control thread sets them, the worker reads them per
	 * send (and switches UDP_SEGMENT off itself on a refusal). */
	atomic_bool udp_gro_on, udp_segment_on;
	/* worker: the counters (the knob fields of this copy are unused;
	 * vxlan_sock_get_stats fills them from the atomics). */
	struct vxlan_sock_stats stats;
	/* kernel: datagrams with a zero UDP checksum (IPv4 only; an IPv6
	 * one is dropped by the kernel before any filter). */
	struct udp_zero_csum rx_zero_csum;
	/* IP_RECVERR is on (fd only: the error of a datagram comes back on
	 * the socket that sent it, and the srcport range's sockets do not ask
	 * for them).  worker: err_pending says a send failed and so may have
	 * taken the socket error of a queued one: the next receive drains the
	 * queue, which would otherwise keep EPOLLERR up (vxlan_icmp.c). */
	bool recverr;
	bool err_pending;
	/* worker: receive buffers kept between reads (from rx_pool). */
	struct pkt *rx_bufs[VXLAN_RX_BURST];
	unsigned n_rx_bufs;
	struct pkt_pool *rx_pool;
	/* Outer-header settings (vxlan_txsock.c), fixed at open. */
	bool zero_csum;
	uint8_t df;                    /* enum vxlan_df */
	uint16_t sport_min, sport_max; /* 0-0: fd's own port */
	/* Send sockets: tx_fd[i] sends with source port sport_min + i (just
	 * fd when the port is fixed, and for the range's port == dstport). */
	unsigned n_tx;
	int tx_fd[VXLAN_SRCPORT_MAX_PORTS];
	/* worker: DF in force on tx_fd[i] (IP_PMTUDISC_DO), for df inherit. */
	bool tx_df_on[VXLAN_SRCPORT_MAX_PORTS];
	/* worker: zero checksum in force on tx_fd[i] (SO_NO_CHECK /
	 * UDP_NO_CHECK6_TX): zero_csum, unless a frame's tunnel_key (pkt.h
	 * tunnel.tx_key) asked otherwise for the last send on it. */
	bool tx_nocsum_on[VXLAN_SRCPORT_MAX_PORTS];
	/* worker: the send backlog, a ring in send order. */
	struct vxlan_backlog_entry *backlog[VXLAN_BACKLOG_MAX];
	unsigned bl_head, bl_count;
	uint32_t bl_bytes;
};

struct vxlan_port {
	struct port up;
	struct vxlan_options opts;
	struct vxlan_sock *sock;
	struct vxlan_encap encap;
	atomic_bool gso_on;            /* atomic */
	uint32_t underlay_mtu;         /* smallest of remote_mtu */
	uint32_t inner_mtu_fit;        /* underlay_mtu - encap overhead */
	uint32_t encap_overhead;       /* 50 (IPv4) or 70 (IPv6) */
	uint32_t remote_mtu[VXLAN_MAX_REMOTES]; /* path MTU per opts.remotes[i] */
};

static inline struct vxlan_port *vxlan_port_cast(const struct port *port)
{
	return (struct vxlan_port *)port;
}

socklen_t vxlan_sockaddr(const struct vxlan_addr *addr, uint16_t port, struct sockaddr_storage *ss);
int vxlan_af(const struct vxlan_addr *addr);

/* One lane: a socket bound to (local, port), with SO_REUSEPORT when it is
 * one of several (vxlan_sock.c). */
int vxlan_sock_open_lane(const struct vxlan_options *opts, uint16_t port, bool reuseport, struct vxlan_sock **out);
void vxlan_sock_close_lane(struct vxlan_sock *sock);

/* Appends the bytes of `mh` from byte `skip` on (a message of `bytes` UDP
 * payload bytes, datagrams of `gso_size`; 0: one) to the backlog, as a
 * copy.  false when the backlog is full: the caller counts the drop. */
bool vxlan_backlog_push(struct vxlan_sock *sock, const struct msghdr *mh, uint32_t bytes,
			uint32_t skip, uint16_t gso_size, unsigned tx_idx, bool df, bool zero_csum);
/* Frees every entry (the socket is closing). */
void vxlan_backlog_clear(struct vxlan_sock *sock);
/* Logs the first UDP_SEGMENT refusal and switches it off. */
void vxlan_sock_udp_segment_refused(struct vxlan_sock *sock, int err);

/* The send sockets (vxlan_txsock.c).  Applies the settings of `opts` to
 * sock (its fd bound already) and opens the srcport sockets; on failure
 * the ones opened are closed again. */
int vxlan_txsock_open(struct vxlan_sock *sock, const struct vxlan_options *opts);
void vxlan_txsock_close(struct vxlan_sock *sock);
/* Which send socket the inner frame at `frame` takes, and whether its
 * outer DF is wanted (df set: always; unset: never; inherit: the inner's). */
unsigned vxlan_txsock_pick(const struct vxlan_sock *sock, const uint8_t *frame, size_t len);
/* vxlan_icmp.c.  After a send on `fd` failed with err: true when it is
 * worth one more try (the error was an ICMP error's, taken by the send);
 * marks the error queue for draining either way. */
bool vxlan_icmp_send_failed(struct vxlan_sock *sock, int fd, int err);
/* Reads the error queue empty, counting per remote. */
void vxlan_icmp_drain(struct vxlan_sock *sock);
/* After recvmmsg failed with err: true when that was a queued ICMP error
 * (drained now: read again). */
bool vxlan_icmp_recv_failed(struct vxlan_sock *sock, int err);

bool vxlan_txsock_want_df(const struct vxlan_sock *sock, const uint8_t *frame, size_t len);
/* The fd of send socket `idx`, with DF switched to `df` first under df
 * inherit, and its outer UDP checksum to zero or computed as `zero_csum`
 * says (one setsockopt when it changes; worker only). */
int vxlan_txsock_fd(struct vxlan_sock *sock, unsigned idx, bool df, bool zero_csum);

/* The send path (vxlan_tx.c), as class hooks. */
int vxlan_tx_io_init(struct port *port, struct port_io *io);
void vxlan_tx_io_fini(struct port *port, struct port_io *io);
void vxlan_tx_batch(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n);
/* The tx counters of a vxlan io (NULL io: zeros). */
void vxlan_tx_io_counters(const struct port_io *io, struct vxlan_port_info *out);

#endif
