/* One captured frame as a datapath records it: the record header both
 * datapaths write into a capture ring, and that the control protocol
 * carries unchanged to `vxctl capture` (ctl/ctl_capture.h frames its
 * stream chunks as these records back to back).  The datapath owns the
 * layout; the protocol uses it, so the packet path needs nothing of the
 * command language.
 *
 * A record is this header, then `caplen` bytes of the frame, then padding
 * to a multiple of 8 (dp_capture_rec_size). */
#ifndef VX_DP_CAPTURE_REC_H
#define VX_DP_CAPTURE_REC_H

#include <stddef.h>
#include <stdint.h>

/* Which way a frame went through its port. */
enum dp_capture_dir {
	DP_CAPTURE_IN = 1,   /* received on the port */
	DP_CAPTURE_OUT = 2,  /* sent out of it */
};

struct dp_capture_rec {
	uint64_t ts_ns;   /* CLOCK_REALTIME when the datapath copied it */
	uint32_t caplen;  /* frame bytes that follow */
	uint32_t len;     /* the frame's length (== caplen) */
	uint8_t dir;      /* enum dp_capture_dir */
	uint8_t outer;    /* 1: outer headers rebuilt around a vxlan datagram */
	uint16_t reserved;
	uint32_t reserved2;
};
_Static_assert(sizeof(struct dp_capture_rec) == 24, "dp_capture_rec is wire format");

/* Bytes a record of caplen takes in a ring or a chunk (header, frame, padding). */
static inline size_t dp_capture_rec_size(uint32_t caplen)
{
	return (sizeof(struct dp_capture_rec) + caplen + 7) & ~(size_t)7;
}

#endif
