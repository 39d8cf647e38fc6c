/* TAP port: a TAP device facing a VM, opened IFF_TAP|IFF_NO_PI|IFF_VNET_HDR
 * with a 12-byte virtio_net_hdr (TUNSETVNETHDRSZ) before every frame.
 *
 * Offloads (probed at open, the way wireguard-go does): TUNSETOFFLOAD with
 * CSUM|TSO4|TSO6|TSO_ECN, then the same plus USO4|USO6; what the kernel
 * refuses is simply off, and frames then arrive already segmented.  The
 * offload mask says what *we* accept on read; writes may always carry GSO
 * metadata, so a tap takes big frames whole and never needs our GSO.
 *
 * The device lives in the namespace `netns` names (ip-netns name; none:
 * the daemon's).  /dev/net/tun is opened inside that namespace (a moment's
 * setns on the calling thread: the control thread), because TUNSETIFF
 * looks the name up there; the fd then works from anywhere.
 *
 * - No device of that name there: it is created PERSISTENT (TUNSETPERSIST
 *   1), so it outlives the daemon (kill -9, SIGTERM, a crash) and the VM
 *   keeps its MAC and addresses; given `mac` and the MTU (`mtu`, else
 *   `default_mtu`, else the kernel's 1500); marked IFLA_IFALIAS
 *   "vxswitchd"; brought up.
 * - A tap of that name there (`ip tuntap add mode tap`, or one an earlier
 *   vxswitchd left): attached as it is.  Its MAC, MTU, addresses and
 *   namespace stay; only an explicit `mtu` is applied; a `mac` it does not
 *   already have is refused (changing a MAC under a running VM breaks its
 *   neighbours, so the switch never does it; a `mac` equal to the device's
 *   is what a restart with the same config gives, and is accepted).  It is
 *   brought up.
 * - A tap another process holds open (QEMU holds its VMs' taps) cannot be
 *   shared: TUNSETIFF says EBUSY, refused as "held open by another process".
 * - With `netns`, a device of that name in the daemon's namespace but not
 *   in `netns` is refused: the switch does not move an existing tap.
 *
 * Destroying the port closes the fd and leaves the device (persistent),
 * unless tap_port_set_delete() asked for it to go (`port del`) and a
 * vxswitchd made it (created now, or alias "vxswitchd"): then TUNSETPERSIST
 * 0 and the close deletes it.  A tap made by someone else stays theirs.
 *
 * Threads (see port.h): the offload mask in force is changed by the control
 * thread (tap_port_set_offload) while workers read and write the fd; it is
 * an atomic, and TUNSETOFFLOAD itself is safe beside concurrent I/O.  The
 * counters below that grow with traffic live in the worker's port_io. */
#ifndef VX_PORT_TAP_H
#define VX_PORT_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "port/port.h"

struct tap_options {
	const char *name;   /* device name, < IF_NAMESIZE */
	const char *netns;  /* NULL: stay in the daemon's namespace */
	uint32_t mtu;       /* 0: not given; an existing tap keeps its MTU */
	uint32_t default_mtu; /* MTU of a created tap when mtu is 0 (0: the kernel's) */
	const uint8_t *mac; /* NULL: not given (a created tap gets the kernel's random one) */
	uint32_t vni;
	bool no_offload;    /* don't ask for CSUM/TSO/USO at all */
	/* Queues wanted (one per worker; 0 or 1: one).  With more than one
	 * the tap is opened IFF_MULTI_QUEUE with that many fds (a created tap
	 * is made multi-queue); an existing single-queue tap (`ip tuntap add`
	 * without multi_queue) gets one queue, and an existing multi-queue
	 * tap as many as asked. */
	unsigned queues;
};

enum tap_offload_bits {
	TAP_OL_CSUM = 1 << 0,
	TAP_OL_TSO = 1 << 1,  /* TSO4 | TSO6 | TSO_ECN */
	TAP_OL_USO = 1 << 2,  /* USO4 | USO6 (Linux >= 6.2) */
};

struct tap_port_info {
	unsigned offloads_probed;  /* TAP_OL_* the kernel accepted at open */
	unsigned offloads_active;  /* TAP_OL_* in force now */
	bool created;              /* this open made the device (else: attached to one there) */
	bool owned;                /* a vxswitchd made it: `port del` deletes it */
	uint8_t mac[6];            /* the device's MAC at open */
	unsigned queues;           /* queues opened (fds): 1, or one per worker */
	bool multi_queue;          /* the device is IFF_MULTI_QUEUE */
	bool steered;              /* our flow-lane program picks each frame's queue */
	/* From the io passed to tap_port_get_info (0 without one): */
	uint64_t rx_gso_frames;    /* frames read with GSO metadata */
	uint64_t rx_partial_csum;  /* frames read with NEEDS_CSUM */
	uint64_t tx_gso_frames;    /* frames written with GSO metadata */
	uint64_t tx_errors;        /* writev failures */
	int last_tx_errno;
};

/* Opens (see above).  On failure, `why` (may be NULL) gets one line
 * saying why, without the port's name. */
int tap_port_open(const struct tap_options *opts, struct port **out, char *why, size_t why_size);

/* `port del`: when the port is destroyed, delete the device too if a
 * vxswitchd made it.  Off again (`on` false) if the removal was refused. */
void tap_port_set_delete(struct port *port, bool on);

/* What the kernel counts for the device itself, outside the daemon. */
struct tap_kernel_stats {
	/* Frames the VM sent that nobody read in time: the tap's queue
	 * (txqueuelen) was full, or no daemon held the tap.  The netdev's
	 * tx_dropped, over the device's whole life (an attached tap brings
	 * what it counted before). */
	uint64_t tx_dropped;
	uint64_t rx_dropped; /* the netdev's rx_dropped */
};

/* Reads them with RTM_GETLINK (IFLA_STATS64) in the device's namespace.
 * Control thread only (it may setns for a moment). */
int tap_port_kernel_stats(const struct port *port, struct tap_kernel_stats *out);

/* Turns the read-side offloads on (as probed) or off at run time. */
int tap_port_set_offload(struct port *port, bool on);

/* The port's settings, and the counters of one worker's `io` (NULL: they
 * read as 0).  Call it on the worker that owns `io`. */
void tap_port_get_info(const struct port *port, const struct port_io *io, struct tap_port_info *out);

bool port_is_tap(const struct port *port);

/* True when a device `name` is there in `netns` (NULL: the daemon's) and
 * no process holds it open: no carrier (a tap has carrier exactly while
 * some fd is attached).  `ip tuntap add` holds the device for a moment
 * while it makes it: attaching then would fail with EBUSY, so a lost port
 * waits for the carrier to go (the next link event, or the next check). */
bool tap_device_free(const char *name, const char *netns);

#endif
