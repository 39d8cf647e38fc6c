/* ctl_capture: what `vxctl capture` carries in its stream chunks, and the
 * one-line summary vxctl prints per frame without -w.
 *
 * A chunk body (ctl_proto.h, CTL_REPLY_STREAM) is records back to back:
 * struct ctl_capture_rec, then `caplen` bytes of the frame, then padding to
 * a multiple of 8.  The daemon's worker writes exactly this into its
 * capture ring (daemon/capture.h), so the control thread copies records
 * from the ring to the client without re-encoding them.
 *
 * The frame is the frame as the switch handles it: a GRO-merged or TSO
 * frame can be 64 KB; `outer` frames of a vxlan port carry outer Ethernet,
 * IP, UDP and VXLAN headers rebuilt from the port's addresses and ports
 * (the socket sees only UDP payload).  Nothing is cut: caplen == len, at
 * most CTL_CAPTURE_SNAPLEN, which is also the pcap snaplen vxctl writes.
 *
 * Pure functions over buffers; the decoders take bytes from the daemon as
 * untrusted (fuzz/fuzz_ctl_capture.c). */
#ifndef VX_CTL_CTL_CAPTURE_H
#define VX_CTL_CTL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

enum {
	CTL_CAPTURE_SNAPLEN = 262144, /* > a 64 KB frame + 70 bytes of outer headers */
};

struct ctl_capture_rec {
	uint64_t ts_ns;   /* CLOCK_REALTIME when the worker copied it */
	uint32_t caplen;  /* frame bytes that follow */
	uint32_t len;     /* the frame's length (== caplen) */
	uint8_t dir;      /* CTL_CAPTURE_IN or CTL_CAPTURE_OUT (ctl_cmd.h) */
	uint8_t outer;    /* 1: outer headers rebuilt around a vxlan datagram */
	uint16_t reserved;
	uint32_t reserved2;
};
_Static_assert(sizeof(struct ctl_capture_rec) == 24, "ctl_capture_rec");

/* Bytes a record of caplen takes in a chunk (header, frame, padding). */
static inline size_t ctl_capture_rec_size(uint32_t caplen)
{
	return (sizeof(struct ctl_capture_rec) + caplen + 7) & ~(size_t)7;
}

/* The record at body[*off], its frame in *frame; *off moves past it.
 * Returns 1, 0 at the end of the body, -EPROTO for bytes that are no
 * record (truncated, caplen over CTL_CAPTURE_SNAPLEN or len, bad dir). */
int ctl_capture_next(const uint8_t *body, size_t size, size_t *off,
		     struct ctl_capture_rec *rec, const uint8_t **frame);

/* One line like tcpdump's default, without the newline:
 *   "12:00:01.123456 in  02:00:00:00:00:01 > ff:ff:ff:ff:ff:ff, IPv4
 *    192.0.2.1 > 192.0.2.2: ICMP echo request, length 98"
 * (local time of ts_ns; IPv4/IPv6 with TCP/UDP ports, ICMP type, VXLAN
 * VNI of an outer frame; other ethertypes by number).  Reads only inside
 * frame[0..caplen).  Returns the length written (truncated to size). */
int ctl_capture_summary(const struct ctl_capture_rec *rec, const uint8_t *frame,
			char *buf, size_t size);

#endif
