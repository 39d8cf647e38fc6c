/* Ports: where frames enter and leave the switch.
 *
 * A port is an object with a small vtable (like OVS's netdev_class).  Two
 * kinds exist today:
 *   - tap:   a TAP device facing a VM (IFF_VNET_HDR, offload metadata in
 *            struct pkt_offload);
 *   - vxlan: one VNI on a UDP socket of the underlay.  Several vxlan ports
 *            (VNIs) with the same local address and UDP port share one
 *            socket (struct vxlan_sock); the daemon reads the socket and
 *            demultiplexes by VNI.
 *
 * Life cycle: <kind>_port_open() (tap_port_open, vxlan_port_open) allocates,
 * opens the fds and probes offloads; the port is usable as soon as it
 * returns.  port_destroy() closes everything and frees; port_destroy(NULL)
 * is a no-op.  Functions return 0 or a negative errno.
 *
 * Batches: rx_batch() fills up to `max` pkts allocated from `pool` and
 * returns how many (0 = nothing to read now).  tx_batch() takes ownership of
 * every pkt passed, sends what it can, counts the rest as drops, and frees
 * them all.
 *
 * Thread-safety: a port belongs to the one datapath thread that polls it. */
#ifndef VX_PORT_PORT_H
#define VX_PORT_PORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "packet/drop_reason.h"
#include "packet/pkt.h"

enum port_kind {
	PORT_KIND_TAP = 1,
	PORT_KIND_VXLAN = 2,
};

enum port_limits {
	PORT_BATCH = 64,
	/* Buckets of the size histogram of frames a port transmits (for a
	 * tap: frames delivered to the VM). */
	PORT_HIST_BUCKETS = 6,
};

/* Upper bounds of the histogram buckets, in bytes (exclusive); the last
 * bucket has no bound. */
extern const uint32_t port_hist_bounds[PORT_HIST_BUCKETS - 1];
extern const char *const port_hist_names[PORT_HIST_BUCKETS];

struct port_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t drops[DROP_REASON_COUNT];
	uint64_t tx_hist_frames[PORT_HIST_BUCKETS];
	uint64_t tx_hist_bytes[PORT_HIST_BUCKETS];
};

struct port;
struct pkt_pool;

struct port_class {
	const char *kind_name;
	enum port_kind kind;
	/* Reads up to `max` frames.  NULL for ports that are read elsewhere
	 * (vxlan: the shared socket is read by the daemon). */
	int (*rx_batch)(struct port *port, struct pkt_pool *pool, struct pkt **out, unsigned max);
	/* Sends and frees `n` frames. */
	void (*tx_batch)(struct port *port, struct pkt **pkts, unsigned n);
	void (*destroy)(struct port *port);
};

struct port {
	const struct port_class *cls;
	char name[IF_NAMESIZE];
	uint16_t id;       /* switch-wide port number, set by the owner */
	uint32_t vni;      /* the VNI (bridge domain) this port belongs to */
	int fd;            /* fd to poll for rx; -1 if none of its own */
	uint32_t mtu;      /* largest frame without GSO metadata the port may carry,
			      L3 bytes (an interface MTU) */
	struct port_stats stats;
};

static inline void port_count_drop(struct port *port, enum drop_reason reason)
{
	if ((unsigned)reason < DROP_REASON_COUNT)
		port->stats.drops[reason]++;
}

/* Counts a transmitted frame of `len` bytes in the tx counters and the
 * size histogram. */
void port_count_tx(struct port *port, uint32_t len);

/* Bucket index of the histogram for a frame of `len` bytes. */
unsigned port_hist_bucket(uint32_t len);

/* Frees every pkt of the batch and counts each as a drop with `reason`. */
void port_drop_batch(struct port *port, struct pkt **pkts, unsigned n, enum drop_reason reason);

void port_destroy(struct port *port);

#endif
