/* TAP port: a TAP device facing a VM, opened IFF_TAP|IFF_NO_PI|IFF_VNET_HDR
 * with a 12-byte virtio_net_hdr (TUNSETVNETHDRSZ) before every frame.
 *
 * Offloads (probed at open, the way wireguard-go does): TUNSETOFFLOAD with
 * CSUM|TSO4|TSO6|TSO_ECN, then the same plus USO4|USO6; what the kernel
 * refuses is simply off, and frames then arrive already segmented.  The
 * offload mask says what *we* accept on read; writes may always carry GSO
 * metadata, so a tap takes big frames whole and never needs our GSO.
 *
 * The device is created (non-persistent: it disappears when the port is
 * destroyed) or, if it exists, attached.  With `netns` it is moved into that
 * namespace (ip-netns name) and brought up there; the fd keeps working from
 * the daemon's namespace.
 *
 * Threads (see port.h): the offload mask in force is changed by the control
 * thread (tap_port_set_offload) while workers read and write the fd; it is
 * an atomic, and TUNSETOFFLOAD itself is safe beside concurrent I/O.  The
 * counters below that grow with traffic live in the worker's port_io. */
#ifndef VX_PORT_TAP_H
#define VX_PORT_TAP_H

#include <stdbool.h>
#include <stdint.h>

#include "port/port.h"

struct tap_options {
	const char *name;   /* device name, < IF_NAMESIZE */
	const char *netns;  /* NULL: stay in the daemon's namespace */
	uint32_t mtu;       /* 0: leave the device's MTU */
	uint32_t vni;
	bool no_offload;    /* don't ask for CSUM/TSO/USO at all */
};

enum tap_offload_bits {
	TAP_OL_CSUM = 1 << 0,
	TAP_OL_TSO = 1 << 1,  /* TSO4 | TSO6 | TSO_ECN */
	TAP_OL_USO = 1 << 2,  /* USO4 | USO6 (Linux >= 6.2) */
};

struct tap_port_info {
	unsigned offloads_probed;  /* TAP_OL_* the kernel accepted at open */
	unsigned offloads_active;  /* TAP_OL_* in force now */
	/* From the io passed to tap_port_get_info (0 without one): */
	uint64_t rx_gso_frames;    /* frames read with GSO metadata */
	uint64_t rx_partial_csum;  /* frames read with NEEDS_CSUM */
	uint64_t tx_gso_frames;    /* frames written with GSO metadata */
	uint64_t tx_errors;        /* writev failures */
	int last_tx_errno;
};

int tap_port_open(const struct tap_options *opts, struct port **out);

/* Turns the read-side offloads on (as probed) or off at run time. */
int tap_port_set_offload(struct port *port, bool on);

/* The port's settings, and the counters of one worker's `io` (NULL: they
 * read as 0).  Call it on the worker that owns `io`. */
void tap_port_get_info(const struct port *port, const struct port_io *io, struct tap_port_info *out);

bool port_is_tap(const struct port *port);

#endif
