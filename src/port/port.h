/* Ports: where frames enter and leave the switch.
 *
 * A port is an object with a small vtable (like OVS's netdev_class).  Two
 * kinds exist today:
 *   - tap:   a TAP device facing a VM (IFF_VNET_HDR, offload metadata in
 *            struct pkt_offload);
 *   - afpacket: an existing link (a veth's end, a VM's tap held by QEMU)
 *            read and written with an AF_PACKET socket (port/afpacket.h);
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
 * Threads.  The port object itself holds no state the datapath writes: it is
 * the configuration (name, VNI, MTU, fds, probed offloads) plus the settings
 * the control thread changes at run time (GSO on/off, a tap's offloads),
 * which are C11 atomics read with relaxed ordering (a worker sees a change
 * within a batch or two; nothing else is ordered by them).  Everything a
 * datapath worker writes -- counters, the vxlan send queue and its scratch
 * -- lives in a struct port_io, one per (worker, port), made with
 * port_io_init() and written only by that worker.  So N workers can share
 * one port object, each passing its own io.  A port is destroyed by the
 * control thread once no worker uses it (after every io of it is
 * finalised).  The counters of an io are plain integers: read them on its
 * worker; from another thread a read may be stale (and is untorn only where
 * aligned 64-bit loads are, as on x86-64).
 *
 * Queues (many workers).  An io belongs to a lane: the index of the worker
 * that drives it.  A port that has one fd per queue (a multi-queue tap,
 * IFF_MULTI_QUEUE) gives lane i queue i, which only worker i reads and
 * writes; a port with one fd (a single-queue tap, an afpacket socket) is
 * read by one worker, port_reader_lane(), and written by every worker on
 * that fd (one write() or sendmmsg() is one frame or batch to the kernel,
 * whichever thread makes it).  A vxlan port's lanes are its socket's
 * (vxlan.h). */
#ifndef VX_PORT_PORT_H
#define VX_PORT_PORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet/drop_reason.h"
#include "packet/pkt.h"

enum port_kind {
	PORT_KIND_TAP = 1,
	PORT_KIND_VXLAN = 2,
	PORT_KIND_AFPACKET = 3,
};

enum port_limits {
	PORT_BATCH = 64,
	/* Buckets of the size histogram of frames a port transmits (for a
	 * tap: frames delivered to the VM). */
	PORT_HIST_BUCKETS = 6,
	/* Frames sent shorter than this carry no payload to speak of (pure
	 * TCP ACKs: 54-90 bytes): diagnose leaves them out when it judges
	 * whether a VM is fed big frames. */
	PORT_TINY_FRAME = 128,
	/* Queues of a multi-queue port: one per worker, at most. */
	PORT_MAX_QUEUES = 16,
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
	uint64_t tx_tiny_frames, tx_tiny_bytes; /* of tx: shorter than PORT_TINY_FRAME */
};

struct port;
struct pkt_pool;

/* One per (worker, port): what that worker writes while it drives the port.
 * `priv` belongs to the port's kind (vxlan: its send queue and header
 * scratch, tap: its counters); only the kind's code looks inside. */
struct port_io {
	struct port_stats stats;
	void *priv;
	unsigned lane;      /* the worker driving this io (port_io_init) */
};

struct port_class {
	const char *kind_name;
	enum port_kind kind;
	/* Reads up to `max` frames.  NULL for ports that are read elsewhere
	 * (vxlan: the shared socket is read by the daemon). */
	int (*rx_batch)(struct port *port, struct port_io *io, struct pkt_pool *pool,
			struct pkt **out, unsigned max);
	/* Sends and frees `n` frames. */
	void (*tx_batch)(struct port *port, struct port_io *io, struct pkt **pkts, unsigned n);
	/* Allocate / free the kind's part of an io (io->priv); NULL: none. */
	int (*io_init)(struct port *port, struct port_io *io);
	void (*io_fini)(struct port *port, struct port_io *io);
	void (*destroy)(struct port *port);
	/* The fd polled with EPOLLERR/EPOLLHUP: 0 if the port still works
	 * (the error was taken and the device is there, e.g. only down),
	 * -ENODEV if its device is gone.  NULL: any error means gone. */
	int (*poll_error)(struct port *port);
};

struct port {
	const struct port_class *cls;
	char name[IF_NAMESIZE];
	uint16_t id;       /* switch-wide port number, set by the owner */
	uint32_t vni;      /* the VNI (bridge domain) this port belongs to */
	int fd;            /* fd to poll for rx; -1 if none of its own (queue 0) */
	unsigned n_queues; /* fds in queue_fd: 1 for most ports, the lanes of a multi-queue tap */
	int queue_fd[PORT_MAX_QUEUES]; /* queue_fd[0] == fd */
	uint32_t mtu;      /* largest frame without GSO metadata the port may carry,
			      L3 bytes (an interface MTU) */
};

/* Makes `io` ready for rx_batch/tx_batch on `port`: zeroed counters and the
 * kind's private part (which may allocate: a vxlan io is ~700 KB of send
 * queue).  0 or -errno (then nothing is left allocated).  Every io must be
 * finalised with port_io_fini() before the port is destroyed. */
int port_io_init(struct port *port, struct port_io *io, unsigned lane);

/* The fd lane `io->lane` reads and writes: its own queue's, or the port's
 * one fd. */
static inline int port_io_fd(const struct port *port, const struct port_io *io)
{
	return io->lane < port->n_queues ? port->queue_fd[io->lane] : port->fd;
}

/* Does the worker of `lane` (of n_lanes) read this port's fd for `lane`?
 * Every lane its own queue; a port of one fd: one lane, spread by port id
 * so that single-queue ports share the workers out. */
static inline bool port_lane_reads(const struct port *port, unsigned lane, unsigned n_lanes)
{
	if (port->n_queues > 1)
		return lane < port->n_queues;
	return n_lanes <= 1 || lane == port->id % n_lanes;
}
/* Frees the kind's part of `io`; pkts still queued in it are freed, not
 * sent.  Counters stay readable.  Safe on an io whose init failed or that
 * was already finalised. */
void port_io_fini(struct port *port, struct port_io *io);

static inline void port_count_drop(struct port_io *io, enum drop_reason reason)
{
	if ((unsigned)reason < DROP_REASON_COUNT)
		io->stats.drops[reason]++;
}

/* Counts a transmitted frame of `len` bytes in the tx counters and the
 * size histogram. */
void port_count_tx(struct port_io *io, uint32_t len);

/* Bucket index of the histogram for a frame of `len` bytes. */
unsigned port_hist_bucket(uint32_t len);

/* Frees every pkt of the batch and counts each as a drop with `reason`. */
void port_drop_batch(struct port_io *io, struct pkt **pkts, unsigned n, enum drop_reason reason);

void port_destroy(struct port *port);

/* For an open that fails: writes the reason into `why` (may be NULL, or
 * `size` 0) and returns `err`. */
int port_why(char *why, size_t size, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
