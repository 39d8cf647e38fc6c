/* afpacket port: an existing link -- the host end of a container's veth,
 * the tap QEMU holds open for its VM -- switched through an AF_PACKET
 * SOCK_RAW socket bound to it.  Open vSwitch's "system" ports on its
 * userspace datapath are the model.
 *
 * The socket (created inside the link's namespace with the setns dance of
 * port/rtnl.h; it keeps working from anywhere afterwards):
 *   - PACKET_VNET_HDR, and PACKET_VNET_HDR_SZ 12 where the kernel has it
 *     (Linux >= 6.4; this machine: 6.18): every frame read or written
 *     carries a virtio_net_hdr, so GSO skbs (64 KB TSO frames) pass whole
 *     both ways, with NEEDS_CSUM / DATA_VALID.  With 12 bytes both frame
 *     port kinds use the same layout (port/frame.h); an older kernel gets
 *     the 10-byte header.  Without PACKET_VNET_HDR at all the port is
 *     refused: the kernel would hand over GSO skbs as 64 KB frames with
 *     unfinished checksums and nothing to say so.
 *   - PACKET_IGNORE_OUTGOING (4.20): frames leaving through the link -- our
 *     own sends, and whatever the host's stack sends there -- are not read
 *     back (they would loop into the switch and teach it wrong MACs).
 *   - PACKET_MR_PROMISC membership: frames to any MAC come in (the MACs
 *     behind the link are the VM's or container's, not the link's own).
 *     The membership goes with the socket.
 *   - SO_RCVBUFFORCE / SO_SNDBUFFORCE (CAP_NET_ADMIN; SO_RCVBUF otherwise)
 *     of AFP_SOCK_BUF: a burst of 64 KB frames fits while the worker is
 *     busy elsewhere.
 *
 * Batches: recvmmsg / sendmmsg, one mmsghdr per frame, each with two
 * iovecs (header, pkt buffer) on read, the frame's frags on write.  Not a
 * TPACKET_V3 ring: the frames outlive the batch (queued to other ports,
 * held by GRO), so a ring slot would have to be copied out into a pkt
 * anyway -- recvmmsg copies once, straight into the pkt, as a tap's readv
 * does -- and a ring that takes 64 KB GSO frames needs 64 KB slots; the
 * TX ring adds nothing over sendmmsg for frames already in pkts.
 *
 * Offloads.  Read: the kernel hands over what the link receives, whole,
 * whatever we ask: there is no TUNSETOFFLOAD for a packet socket, and a
 * veth passes its peer's TSO frames through.  Write: a GSO frame written
 * goes through dev_queue_xmit, which segments it in software when the
 * link lacks the offload (validate_xmit_skb); a veth (tso on) and a tap
 * netdev with the offloads its reader asked for take it whole.  So the
 * switch's GSO is never needed for this port; what the link can take is
 * shown (link tso, ETHTOOL_GTSO at open and on each of its link events:
 * QEMU sets its tap's offloads after the switch opened it) for the
 * operator.  The tap-tso
 * knob does not apply: it asks a tap for segmented reads, which a packet
 * socket cannot ask for.
 *
 * The link's state.  A link going down (NETDEV_DOWN) sets the socket's
 * error (ENETDOWN): EPOLLERR; afpacket poll_error takes it and says
 * whether the link is gone: the socket's bound ifindex (getsockname)
 * becomes -1 only then (NETDEV_UNREGISTER).  Down: the kernel hooks the
 * socket in again when the link comes up.  But a link that is deleted
 * goes down first and is unregistered after, and the second step sets no
 * error (the socket is no longer hooked in): the EPOLLERR comes while the
 * link is still there.  So the daemon also asks, on netlink's RTM_DELLINK
 * (links.c), and the worker marks the port lost when poll_error says
 * gone.  Gone: the port goes down, and the daemon reopens it when a link
 * of that name is back.
 *
 * Not defended: the link's own host stack still sees every frame (a
 * packet socket copies, it does not steal); give the switch a link with
 * no addresses of its own. */
#ifndef VX_PORT_AFPACKET_H
#define VX_PORT_AFPACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port/port.h"

enum afpacket_limits {
	AFP_SOCK_BUF = 8 << 20, /* SO_RCVBUF / SO_SNDBUF, bytes */
	AFP_NETNS_SIZE = 64,
};

struct afpacket_options {
	const char *name;   /* the switch's port name, < IF_NAMESIZE */
	const char *dev;    /* the existing link, < IF_NAMESIZE */
	const char *netns;  /* its namespace; NULL: the daemon's */
	uint32_t vni;
};

struct afpacket_port_info {
	char dev[IF_NAMESIZE];
	char netns[AFP_NETNS_SIZE]; /* "" = the daemon's */
	int ifindex;                /* the link's at open */
	unsigned hdr_size;          /* virtio_net_hdr bytes: 12 (PACKET_VNET_HDR_SZ) or 10 */
	int rcvbuf;                 /* SO_RCVBUF as the kernel reports it (doubled) */
	bool link_tso;              /* the link takes TSO frames (ETHTOOL_GTSO at open and on its link events) */
	/* From the io passed to afpacket_port_get_info (0 without one): */
	uint64_t rx_gso_frames, rx_partial_csum, tx_gso_frames;
	uint64_t rx_truncated;      /* frames longer than a pkt buffer (MSG_TRUNC; also drop mtu_exceeded) */
	uint64_t tx_errors;
	int last_tx_errno;
};

/* Opens (see above).  On failure `why` (may be NULL) gets one line saying
 * why, without the port's name. */
int afpacket_port_open(const struct afpacket_options *opts, struct port **out, char *why, size_t why_size);

/* The port's settings and the counters of one worker's `io` (NULL: 0).
 * Call it on the worker that owns `io`. */
void afpacket_port_get_info(const struct port *port, const struct port_io *io, struct afpacket_port_info *out);

/* Reads the link's TSO setting again (ETHTOOL_GTSO): on its link events,
 * since a tap's reader (QEMU) sets it after we opened.  Control thread
 * only (a moment's setns). */
void afpacket_port_refresh_link(struct port *port);

bool port_is_afpacket(const struct port *port);

/* The link's name ("" for another kind of port). */
const char *port_frame_dev(const struct port *port);

#endif
