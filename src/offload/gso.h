/* GSO: software segmentation of the big frames a TAP hands us (virtio_net_hdr
 * gso_type TCPV4/TCPV6, optionally | ECN, and UDP_L4) into MSS-sized
 * segments, the inverse of GRO (offload/gro.h).
 *
 * Per segment, as the kernel's tcp_gso_segment / inet_gso_segment do
 * (docs/reference/gro-gso-rules.md section 2):
 *  - IPv4: total length, ID = first ID + i (16-bit wrap), header checksum;
 *    IPv6: payload length; everything else in the headers is copied;
 *  - TCP: seq = first seq + i * mss; CWR only on the first segment, FIN and
 *    PSH only on the last; UDP_L4: UDP length per segment;
 *  - L4 checksum complete, or with GSO_CSUM_PARTIAL left as the
 *    pseudo-header sum with NEEDS_CSUM, csum_start and csum_offset set, for
 *    a next hop (a TAP with TUN_F_CSUM) that completes it;
 *  - every segment carries mss payload bytes except possibly the last.
 * A frame whose payload is not larger than gso_size (a "tiny GSO" frame) is
 * one segment; a frame without gso only has its partial checksum completed.
 *
 * Input contract: pkt->ol validated by vnet_hdr_validate() and the offsets
 * l3_ofs/l4_ofs set by flow_extract() (headers in the linear part; payload
 * may continue in frags).  ol.hdr_len is never used: the header length is
 * recomputed from the TCP data offset / UDP header.
 *
 * Three ways out, none allocates per packet.  The daemon uses one:
 *  - gso_train_build_iov(): the segments' headers written into a caller's
 *    buffer and the payload left where it is, as iovecs; all segments at
 *    ONE stride, each optionally wrapped in VXLAN, so one sendmsg with
 *    UDP_SEGMENT (gso_size = stride) carries many of them
 *    (port/vxlan_tx.c).  A 64 KB frame cut for a 1500-byte underlay is more
 *    than one UDP_SEGMENT send may carry: gso_iov_train_sends() cuts it.
 * The other two are references, kept for what tests, benchmarks and fuzzers
 * compare against (gso_ref_*: test_gso, test_gso_gro_property,
 * test_vxlan_encap, bench_gso, fuzz_gso); nothing in the daemon calls them:
 *  - gso_ref_segment(): one struct pkt per segment, from a caller's pkt_pool
 *    (the kernel's shape);
 *  - gso_ref_train_build(): the same train as the iovec one, copied whole
 *    into a caller's buffer (gso_ref_train_sends() cuts it).
 *
 * Error convention: 0 / a count, or a negative errno; gso_drop_reason()
 * names the drop for the counters.  Pure functions: no I/O, no globals. */
#ifndef VX_OFFLOAD_GSO_H
#define VX_OFFLOAD_GSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "offload/vxlan_encap.h"
#include "packet/drop_reason.h"
#include "packet/pkt.h"

enum gso_flags {
	/* Leave inner L4 checksums partial (pseudo-header sum, NEEDS_CSUM)
	 * for a next hop that completes them.  Only for gso_ref_segment(): what
	 * goes into a train goes on the wire, where nobody would. */
	GSO_CSUM_PARTIAL = 1 << 0,
};

enum gso_limits {
	/* Most segments one frame may be cut into (64 KB / 1-byte MSS would
	 * be absurd; the kernel's own GSO_MAX_SEGS is 65535, but nothing
	 * legitimate goes past a few hundred). */
	GSO_MAX_SEGS = 1024,
	/* UDP payload one UDP_SEGMENT send may carry: the IP length field
	 * minus IPv4+UDP headers (IPv6: minus UDP only). */
	GSO_UDP_SEND_MAX_BYTES_IPV4 = 65535 - IPV4_HDR_LEN - UDP_HDR_LEN,
	GSO_UDP_SEND_MAX_BYTES_IPV6 = 65535 - UDP_HDR_LEN,
	/* UDP_MAX_SEGMENTS before Linux 6.13 (1382e3b6a350 raised it to 128,
	 * VNET_UDP_MAX_SEGMENTS): the safe value when the kernel is unknown. */
	GSO_UDP_MAX_SEGMENTS_OLD = 64,
};

/* What segmentation of a frame looks like, derived from the frame alone. */
struct gso_plan {
	uint16_t l3_ofs;
	uint16_t l4_ofs;
	uint16_t hdr_len;      /* recomputed: frame start .. end of L4 header */
	uint16_t mss;          /* payload bytes per segment */
	uint32_t payload_len;  /* L4 payload bytes of the whole frame (no gso: frame length) */
	uint32_t nr_segs;      /* >= 1 */
	uint8_t ip_version;    /* 4 or 6; 0 for a frame that is not segmented */
	uint8_t l4_proto;      /* IP_PROTO_TCP / IP_PROTO_UDP; 0 if none */
	bool csum_needed;      /* the frame (or its segments) has a partial checksum */
};

/* Fills `plan` for pkt.  A frame without gso is one segment (nr_segs 1,
 * ip_version 0, whole frame copied as it is).  Returns 0, -EOPNOTSUPP for a
 * gso type we do not segment (PKT_GSO_UDP i.e. UFO), -EINVAL if the headers
 * the offsets point at disagree with the gso type or are not in the linear
 * part, -E2BIG for more than GSO_MAX_SEGS segments. */
int gso_plan(const struct pkt *pkt, struct gso_plan *plan);

/* Segments `pkt` into new pkts from `pool`, stored in segs[0..n), n
 * returned.  `pkt` is left untouched and still owned by the caller; each
 * segment is a new reference the caller frees.  A frame without gso comes
 * back as one new pkt (a copy) with its checksum completed unless
 * GSO_CSUM_PARTIAL.  Segments have l2/l3/l4/payload_ofs set, and ol either
 * zero or (GSO_CSUM_PARTIAL) NEEDS_CSUM with csum_start/csum_offset.
 * Errors as gso_plan(), plus -ENOSPC if max_segs is too small, -ENOBUFS if
 * the pool runs dry (nothing is left allocated on any error). */
int gso_ref_segment(const struct pkt *pkt, unsigned flags, struct pkt_pool *pool,
		struct pkt **segs, unsigned max_segs);

/* What each segment in a train looks like. */
enum gso_train_shape {
	GSO_TRAIN_PLAIN,       /* inner segments only (no encapsulation) */
	GSO_TRAIN_VXLAN_UDP,   /* VXLAN header + inner segment: UDP payloads for a socket */
	GSO_TRAIN_VXLAN_FRAME, /* outer Eth/IP/UDP/VXLAN + inner segment: full frames */
};

/* A caller's buffer filled with segments at offsets 0, stride, 2*stride, ...
 * Every segment is `stride` bytes except possibly the last (`last_size`). */
struct gso_train {
	uint8_t *buf;         /* set by the caller */
	uint32_t cap;         /* set by the caller: bytes at buf */
	uint32_t len;         /* bytes used */
	uint32_t stride;
	uint32_t nr_segs;
	uint32_t last_size;
};

/* Bytes gso_ref_train_build() needs for `pkt` in `shape` (0 if gso_plan fails). */
uint32_t gso_ref_train_size(const struct pkt *pkt, enum gso_train_shape shape,
			const struct vxlan_encap *encap);

/* Builds the train for `pkt` into train->buf.  `encap` is needed for the
 * VXLAN shapes (VNI; for GSO_TRAIN_VXLAN_FRAME all outer fields) and may be
 * NULL for GSO_TRAIN_PLAIN.  `outer_ip_id` (VXLAN_FRAME with IPv4 only, may
 * be NULL otherwise) is the outer IPv4 ID of the first segment and is
 * advanced past the last one.  Inner checksums are always complete; outer
 * UDP checksums per the encap config.  Returns 0, the gso_plan() errors,
 * -EINVAL for GSO_CSUM_PARTIAL or a bad encap, -ENOSPC if cap is too small,
 * -EMSGSIZE if an encapsulated segment exceeds an IP datagram. */
int gso_ref_train_build(const struct pkt *pkt, enum gso_train_shape shape,
		    const struct vxlan_encap *encap, uint16_t *outer_ip_id,
		    unsigned flags, struct gso_train *train);

/* One UDP_SEGMENT sendmsg: train->buf[ofs .. ofs+len), gso_size = stride. */
struct gso_send {
	uint32_t ofs;
	uint32_t len;
	uint16_t gso_size;
	uint16_t nr_segs;
};

/* Most segments of `stride` bytes one send may carry under `max_bytes` of
 * UDP payload and `max_segs` segments (0 if even one does not fit). */
uint32_t gso_segs_per_send(uint32_t stride, uint32_t max_bytes, uint32_t max_segs);

/* Cuts a GSO_TRAIN_VXLAN_UDP train into sends under those limits (e.g.
 * GSO_UDP_SEND_MAX_BYTES_IPV4 and GSO_UDP_MAX_SEGMENTS_OLD); returns the
 * number of sends written, or -ENOSPC if max_sends is too small, -EMSGSIZE
 * if one segment alone is over max_bytes. */
int gso_ref_train_sends(const struct gso_train *train, uint32_t max_bytes, uint32_t max_segs,
		    struct gso_send *sends, unsigned max_sends);

/* The zero-copy form of a GSO_TRAIN_PLAIN or GSO_TRAIN_VXLAN_UDP train:
 * what gso_ref_train_build() would write, as iovecs instead of one buffer.  Per
 * segment a header block (prefix + inner headers, written into hdr_buf)
 * then the segment's payload where it already is, in the frame's linear
 * part or frags (one iovec, more where the payload crosses a frag
 * boundary).  Concatenated, the iovecs are byte for byte that train, so a
 * sendmsg with UDP_SEGMENT (gso_size = stride) cuts it at the same places
 * and the only copy of the payload is the kernel's.  The iovecs point into
 * the frame: it must outlive them.  Inner checksums are complete, summed
 * over the payload where it lies. */
struct gso_iov_train {
	uint8_t *hdr_buf;      /* set by the caller */
	uint32_t hdr_cap;      /* set by the caller: bytes at hdr_buf */
	struct iovec *iov;     /* set by the caller */
	uint32_t iov_cap;      /* set by the caller: entries at iov */
	uint32_t n_iov;
	uint32_t hdr_used;     /* bytes of hdr_buf used */
	uint32_t len, stride, nr_segs, last_size; /* as struct gso_train */
	/* seg_iov[i]: index of segment i's first iovec; seg_iov[nr_segs] = n_iov. */
	uint16_t seg_iov[GSO_MAX_SEGS + 1];
};

/* Header bytes and iovecs gso_train_build_iov() needs for `pkt` (false if
 * gso_plan fails or the frame has no gso). */
bool gso_iov_train_needs(const struct pkt *pkt, enum gso_train_shape shape,
			 const struct vxlan_encap *encap, uint32_t *hdr_bytes, uint32_t *iovs);

/* Builds the iovec train for a frame with gso.  Returns 0, the gso_plan()
 * errors, -EINVAL for a frame without gso, GSO_TRAIN_VXLAN_FRAME or a bad
 * encap, -ENOSPC if hdr_cap or iov_cap is too small, -EMSGSIZE as
 * gso_ref_train_build(). */
int gso_train_build_iov(const struct pkt *pkt, enum gso_train_shape shape,
			const struct vxlan_encap *encap, struct gso_iov_train *train);

/* One UDP_SEGMENT sendmsg of an iovec train: train->iov[iov_first ..
 * iov_first + iov_count), `len` bytes, gso_size = stride. */
struct gso_iov_send {
	uint32_t iov_first;
	uint32_t iov_count;
	uint32_t len;
	uint16_t gso_size;
	uint16_t nr_segs;
};

/* gso_ref_train_sends() for an iovec train: the same cuts, as iovec ranges. */
int gso_iov_train_sends(const struct gso_iov_train *train, uint32_t max_bytes, uint32_t max_segs,
			struct gso_iov_send *sends, unsigned max_sends);

/* Completes the partial checksum of a frame without gso in place (the
 * NEEDS_CSUM case of a plain TAP read) and clears NEEDS_CSUM; no-op
 * without it.  -EINVAL if the checksum field is outside the frame. */
int gso_csum_complete(struct pkt *pkt);

/* True if a frame the GRO is about to write to a TAP passes the kernel's
 * virtio_net_hdr_to_skb checks (and ours): known gso type; with gso,
 * gso_size > 0, NEEDS_CSUM, csum_offset 16 for TCP / 6 for UDP_L4, ECN only
 * with TCP, and a payload larger than gso_size (else the frame must say
 * no gso); csum_start + csum_offset + 2 inside the frame; hdr_len not past
 * the frame. */
bool gso_tap_frame_ok(const struct pkt *pkt);

/* The drop reason for a negative errno from this module. */
enum drop_reason gso_drop_reason(int err);

#endif
