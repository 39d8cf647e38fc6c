/* Frame ports: the ports that carry Ethernet frames with a virtio_net_hdr
 * in front of each (a tap, IFF_VNET_HDR; an afpacket port, PACKET_VNET_HDR),
 * read and written on a file descriptor of their own.  What the two share
 * lives here, so both frame and count alike:
 *   - the iovec layout of one frame: the header, then the linear part,
 *     then the frags (frame_tx_iov);
 *   - what a read must satisfy before the frame goes on (frame_rx_accept:
 *     a header of the port's size, the counters), and what a write counts
 *     (frame_tx_count).
 * Neither trusts the header beyond its size: the datapath validates it
 * against the parse (parse/vnet_hdr_check.h), for both kinds alike.
 *
 * port_is_frame() is what the daemon asks when it means "a port with an
 * fd to poll that faces a VM or a container" rather than "a tap". */
#ifndef VX_PORT_FRAME_H
#define VX_PORT_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "packet/pkt.h"
#include "port/port.h"

/* Counters a frame port's worker writes, in its part of the port_io. */
struct frame_io_stats {
	uint64_t rx_gso_frames;    /* frames read with GSO metadata */
	uint64_t rx_partial_csum;  /* frames read with NEEDS_CSUM */
	uint64_t tx_gso_frames;    /* frames written with GSO metadata */
	uint64_t tx_errors;        /* writes the kernel refused */
	int last_tx_errno;
};

enum frame_limits {
	FRAME_TX_IOV_MAX = 2 + PKT_MAX_FRAGS, /* header, linear part, frags */
};

/* Writes `pkt`'s offload metadata as a header of `hdr_size` bytes into
 * `hdr` and lays header and frame out in `iov` (FRAME_TX_IOV_MAX entries).
 * Returns the number of iovecs.  Pure. */
unsigned frame_tx_iov(const struct pkt *pkt, uint8_t *hdr, size_t hdr_size, struct iovec *iov);

/* A read of `got` bytes (header of `hdr_size`, then the frame, already in
 * pkt->data): reads the header into pkt->ol, sets size and in_port and
 * counts it.  False (counted as vnet_hdr_truncated) if shorter than the
 * header: the caller frees the pkt. */
bool frame_rx_accept(struct port *port, struct port_io *io, struct frame_io_stats *fs, struct pkt *pkt,
		     const uint8_t *hdr, size_t got, size_t hdr_size);

/* Counts the write of `pkt`: sent (err 0) or refused with errno `err`. */
void frame_tx_count(struct port_io *io, struct frame_io_stats *fs, const struct pkt *pkt, int err);

/* io_init / io_fini of a frame port: `size` zeroed bytes of io->priv
 * (its counters and scratch), freed again. */
int frame_io_alloc(struct port_io *io, size_t size);
void frame_io_free(struct port *port, struct port_io *io);

/* A tap or an afpacket port. */
bool port_is_frame(const struct port *port);

#endif
