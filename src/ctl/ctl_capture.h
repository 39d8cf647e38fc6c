/* ctl_capture: what `vxctl capture` carries in its stream chunks, and the
 * one-line summary vxctl prints per frame without -w.
 *
 * A chunk body (ctl_proto.h, CTL_REPLY_STREAM) is records back to back:
 * struct dp_capture_rec (dp/capture_rec.h), then `caplen` bytes of the frame, then padding to
 * a multiple of 8.  The daemon's worker writes exactly this into its
 * capture ring (dp/capture.h), so the control thread copies records
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

#include "dp/capture_rec.h"

enum {
	CTL_CAPTURE_SNAPLEN = 262144, /* > a 64 KB frame + 70 bytes of outer headers */
};


/* The record at body[*off], its frame in *frame; *off moves past it.
 * Returns 1, 0 at the end of the body, -EPROTO for bytes that are no
 * record (truncated, caplen over CTL_CAPTURE_SNAPLEN or len, bad dir). */
int ctl_capture_next(const uint8_t *body, size_t size, size_t *off,
		     struct dp_capture_rec *rec, const uint8_t **frame);

/* One line like tcpdump's default, without the newline:
 *   "12:00:01.123456 in  02:00:00:00:00:01 > ff:ff:ff:ff:ff:ff, IPv4
 *    192.0.2.1 > 192.0.2.2: ICMP echo request, length 98"
 * (local time of ts_ns; IPv4/IPv6 with TCP/UDP ports, ICMP type, VXLAN
 * VNI of an outer frame; other ethertypes by number).  Reads only inside
 * frame[0..caplen).  Returns the length written (truncated to size). */
int ctl_capture_summary(const struct dp_capture_rec *rec, const uint8_t *frame,
			char *buf, size_t size);

#endif
