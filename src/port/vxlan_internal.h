/* Private to src/port/vxlan_*.c: the socket and port structures the three
 * files share.
 *
 *   vxlan_sock.c  the socket: open, knobs, stats, path MTU probes, receive
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
};

struct vxlan_sock {
	int fd;
	unsigned refcnt;               /* control */
	struct vxlan_addr local;
	uint16_t port;
	bool udp_gro_probed, udp_segment_probed;
	/* Knobs: the control thread sets them, the worker reads them per
	 * send (and switches UDP_SEGMENT off itself on a refusal). */
	atomic_bool udp_gro_on, udp_segment_on;
	/* worker: the counters (the knob fields of this copy are unused;
	 * vxlan_sock_get_stats fills them from the atomics). */
	struct vxlan_sock_stats stats;
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

/* The send path (vxlan_tx.c), as class hooks. */
int vxlan_tx_io_init(struct port *port, struct port_io *io);
void vxlan_tx_io_fini(struct port *port, struct port_io *io);
void vxlan_tx_batch(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n);
/* The tx counters of a vxlan io (NULL io: zeros). */
void vxlan_tx_io_counters(const struct port_io *io, struct vxlan_port_info *out);

#endif
