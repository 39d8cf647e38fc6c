/* GRO: merge consecutive TCP segments of one flow into one big frame, with
 * the merge and flush rules of Linux (docs/reference/gro-gso-rules.md), so
 * a TAP receives ~64 KB frames instead of 1398-byte ones (seeds/000_*).
 *
 * What?
 * =====
 *
 * Frames go in one at a time (gro_receive) and come out through the
 * table's `emit` callback, either merged (one frame carrying many segments'
 * payload, with virtio_net_hdr-style offload metadata) or untouched.  The
 * input is a frame whose offsets were set by the parser:
 *
 *  - a plain Ethernet frame (flow_extract(): l2/l3/l4 offsets);
 *  - a full VXLAN frame, outer Eth/IP/UDP/VXLAN as in a pcap (flow_extract()
 *    with the VXLAN port: tunnel_ofs, inner_* offsets, pkt->tunnel);
 *  - a VXLAN payload as a UDP socket with UDP_GRO hands it, starting at the
 *    VXLAN header (flow_extract_vxlan(): tunnel_ofs 0, inner_* offsets,
 *    pkt->tunnel filled by the port).
 *
 * GRO is the last stage before a TAP, so every tunnelled frame leaves
 * *decapsulated*: its inner frame, with plain offsets (l2_ofs 0, l3, l4,
 * payload; tunnel_ofs and inner_* absent) and pkt->tunnel kept as
 * metadata.  Apart from that, frames that are not merged leave byte for byte
 * as they came.  A frame without parsed offsets leaves fully untouched.
 *
 * A merged frame has:
 *  - the first segment's headers, IPv4 tot_len / IPv6 payload_len covering
 *    all payload, a fresh IPv4 header checksum, FIN/PSH of the last segment;
 *  - the TCP checksum field holding the pseudo-header sum (not complemented)
 *    and ol = { NEEDS_CSUM, gso_type TCPV4/TCPV6 (| ECN when the first
 *    segment had CWR), gso_size = MSS (the first segment's payload size),
 *    hdr_len = end of the TCP header, csum_start = TCP header, csum_offset
 *    16 }, exactly what a TAP with TUN_F_CSUM|TUN_F_TSO* accepts;
 *  - the first segment's headers and payload in the linear part and every
 *    further segment's payload as one frag owned by that segment's pkt
 *    (no payload is copied): write it with one writev.
 * A run of one segment leaves with ol.flags = DATA_VALID (its checksum was
 * verified) and its bytes unchanged.
 *
 * Merge and flush rules (Linux tcp_gro_receive / inet_gro_flush / vxlan)
 * ======================================================================
 *
 * Same flow: same in_port; identical outer Ethernet header (full VXLAN
 * frames), outer addresses, UDP ports, outer UDP checksum both zero or both
 * non-zero, VXLAN flags and VNI; identical inner Ethernet header (with VLAN
 * tags); same IP addresses (IPv6: and flow label) and TCP ports.
 *
 * Never held (passed through; the same flow's held run is flushed first so
 * the flow stays in order): not IPv4/IPv6 + TCP; IPv4 options or fragment;
 * IPv6 extension headers; IP length field not equal to the real length
 * (outer too, and outer UDP length); bad IPv4 header checksum; bad TCP
 * checksum (GRO_PASS_CSUM_BAD); already offloaded input (gso_type or
 * NEEDS_CSUM set); zero payload (pure ACK); URG/PSH/RST/SYN/FIN on a
 * segment that would start a run.
 *
 * Flush the held run before the new segment (which may then start a new
 * run): CWR on the new segment; flags other than CWR/FIN/PSH differ; ACK
 * or window differs (Linux compares the whole doff/flags/window word); TCP
 * header length or any option byte differs; TTL/TOS/DF or
 * hop limit/traffic class differ (inner, and outer when present); IPv4 ID
 * neither fixed nor first_id + count (decided at the second segment, as
 * mainline: one bit for inner, one for outer); payload larger than MSS; seq
 * not contiguous; the merged frame would reach max_size (L3 length, default
 * 65536 like gro_max_size) or use more than PKT_MAX_FRAGS frags.
 *
 * After a merge, complete the run now if the new segment is shorter than
 * MSS or carries URG/PSH/RST/SYN/FIN (FIN/PSH are OR-ed into the head).
 *
 * Flushing
 * ========
 *
 * gro_flush(GRO_FLUSH_ALL) at the end of each input batch (gro_receive_batch
 * does it), like napi_complete_done(); gro_flush(GRO_FLUSH_EXPIRED) for a
 * caller that holds runs across batches.  A run's deadline is its FIRST
 * segment's arrival + hold_ns: later arrivals never push it back
 * (seeds/001_*: a timer re-armed by every arrival never fires under load).
 * Segments arriving at or before the deadline join the run;
 * gro_flush(GRO_FLUSH_EXPIRED, now) completes it once now >= deadline
 * (reason timeout), and gro_receive() completes a run of the segment's own
 * flow whose deadline has passed (now > deadline) before looking at the
 * segment.  hold_ns is taken literally: 0 holds a run only until the poll
 * that started it ends (its segments share one now_ns; the poll-end
 * EXPIRED flush completes it).  gro_next_expiry_ns() tells a caller when to
 * wake up next.  Time is the caller's now_ns: nothing here reads a clock.
 *
 * Fast path
 * =========
 *
 * Segments arrive in trains (consecutive segments of one flow).  A segment
 * is first compared with the run the previous segment joined: one masked
 * compare of all its header bytes against the header the run's next
 * full-MSS segment must have (the first segment's, with seq, IPv4 IDs and
 * IPv4 header checksums advanced as the rules ask; only the TCP checksum,
 * the urgent pointer and a non-zero outer UDP checksum are masked).  If it
 * matches it is merged; anything else (another flow, a short or changed
 * segment, a rule in question, a bad checksum) goes the full way above, so
 * both ways give the same result.
 *
 * Checksums: the TCP checksum of every segment is verified (one pass over
 * its payload, with AVX2 where the CPU has it; still the dominant cost)
 * unless the input carries ol.flags DATA_VALID (a port that knows the
 * checksum was checked: a NIC's rx checksum, or a non-zero outer UDP
 * checksum the kernel verified, which covers the whole inner frame; a zero
 * one proves nothing).  The outer UDP checksum is not verified here: the
 * parser/port does that.
 *
 * Speed: the per-segment loop (gro_receive_burst()) is built twice, for
 * baseline x86-64 and for AVX2, and gro_create() picks one; both run the
 * same source, so they give the same frames.
 *
 * Bounds
 * ======
 *
 * At most max_flows runs are held, in buckets of GRO_BUCKET_SLOTS by flow
 * hash (the kernel's 8 x 8).  A new run in a full bucket completes the
 * oldest run of that bucket (GRO_FLUSH_TABLE_FULL): nothing is dropped.
 * Memory is allocated only by gro_create(), including one struct flow_key
 * per slot for the key a held run leaves with.
 *
 * Ownership: gro_receive() takes the caller's reference on the pkt; emit()
 * receives one reference per frame it is given.  A frame given in emits
 * at most two frames (the held run of its flow, and itself); a burst of n
 * at most 2n; gro_flush() at most the runs held.  A caller that collects
 * what a call emits sizes its array by this (fuzz/fuzz_gro.c checks it).
 *
 * Thread-safety: a table belongs to one worker; nothing is locked. */
#ifndef VX_OFFLOAD_GRO_H
#define VX_OFFLOAD_GRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "packet/pkt.h"
#include "parse/flow.h"

enum gro_limits {
	GRO_BUCKET_SLOTS = 8,             /* kernel MAX_GRO_SKBS */
	GRO_DEFAULT_MAX_FLOWS = 64,       /* 8 buckets x 8, like the kernel */
	GRO_MAX_FLOWS = 4096,
	GRO_DEFAULT_MAX_SIZE = 65536,     /* kernel gro_max_size default */
	GRO_SIZE_BUCKETS = 8,             /* segments-per-frame histogram */
};

/* A hold limit for callers that hold runs across polls and want the usual
 * one (hold_ns is taken literally; 0 is not this): 50 µs. */
#define GRO_DEFAULT_HOLD_NS 50000ull

/* A frame leaving GRO; the callee owns the reference to `pkt`.  `key` is
 * the flow key the caller parsed for it (flow_extract /
 * flow_extract_vxlan), so nobody parses the frame again: the tunnel
 * section still describes the outer headers it came in (VNI, addresses,
 * ports) and L2..L4 the inner, now decapsulated, frame.  A merged frame
 * gets its head segment's key (addresses, ports, VLANs, TTL/TOS are the
 * run's; tcp_opts the head's, whose header it carries) with tcp_flags
 * including the FIN/PSH merged into the header.  NULL when the frame came
 * without a key.  Either one of the keys the caller passed in (a pointer
 * into its own array, which lives as long as the caller keeps it) or
 * GRO's own copy, valid only during the call: copy what you keep.
 * An emit that only collects the frames, for the caller to hand on once
 * the call into GRO returned, keeps data flowing one way (the daemon's
 * does, dp/user/datapath.c; the kernel's gro_normal_one() lists them). */
typedef void gro_emit_fn(void *aux, struct pkt *pkt, const struct flow_key *key);

struct gro_config {
	uint32_t max_flows;  /* runs held at once; 0 = GRO_DEFAULT_MAX_FLOWS */
	uint32_t max_size;   /* L3 length cap of a merged frame, at most
			      * 65536; 0 = GRO_DEFAULT_MAX_SIZE */
	uint64_t hold_ns;    /* run lifetime from its first segment, taken
			      * literally: 0 = until the poll ends (see
			      * "Flushing"); GRO_DEFAULT_HOLD_NS is usual */
	gro_emit_fn *emit;   /* required */
	void *emit_aux;
};

/* Why a held run was completed.  Names are operator-visible: add, never
 * rename. */
#define GRO_FLUSH_REASONS(X)                                              \
	X(BATCH_END, "batch_end")                                         \
	X(TIMEOUT, "timeout")                                             \
	X(TABLE_FULL, "table_full")                                       \
	X(SIZE_CAP, "size_cap")                                           \
	X(FRAGS_FULL, "frags_full")                                       \
	/* the last merged segment ended the run */                       \
	X(SHORT_SEGMENT, "short_segment")                                 \
	X(FLAGS, "flags") /* PSH/FIN merged, or URG/RST/SYN/CWR next */   \
	/* not_mergeable: the next segment of the flow did not fit */     \
	X(SEQ_GAP, "not_mergeable_seq_gap")                               \
	X(ACK_CHANGED, "not_mergeable_ack")                               \
	X(OPTIONS_CHANGED, "not_mergeable_tcp_options")                   \
	X(FLAGS_CHANGED, "not_mergeable_tcp_flags")                       \
	X(WINDOW_CHANGED, "not_mergeable_tcp_window")                     \
	X(IP_FIELDS, "not_mergeable_ttl_tos_df")                          \
	X(IP_ID, "not_mergeable_ip_id")                                   \
	X(OVERSIZED_SEGMENT, "not_mergeable_segment_over_mss")            \
	X(PASSTHROUGH, "not_mergeable_passthrough") /* see gro_pass_reason */

enum gro_flush_reason {
#define GRO_FLUSH_ENUM(name, str) GRO_FLUSH_##name,
	GRO_FLUSH_REASONS(GRO_FLUSH_ENUM)
#undef GRO_FLUSH_ENUM
	GRO_FLUSH_REASON_COUNT
};

/* Why an input frame left without being held or merged. */
#define GRO_PASS_REASONS(X)                                               \
	X(NOT_TCP, "not_tcp")          /* also: frame not parsed */       \
	X(OFFLOADED, "already_offloaded")                                 \
	X(IP_OPTIONS, "ip_options")                                       \
	X(IP_FRAGMENT, "ip_fragment")                                     \
	X(IPV6_EXT, "ipv6_ext_headers")                                   \
	X(LEN_MISMATCH, "length_mismatch")                                \
	X(IP_CSUM_BAD, "ip_csum_bad")                                     \
	X(CSUM_BAD, "csum_bad")                                           \
	X(PURE_ACK, "pure_ack")                                           \
	X(FLAGS, "flags")             /* URG/PSH/RST/SYN/FIN, no run */   \
	X(FLUSHED_ALONE, "flushed_alone") /* a run of one segment */

enum gro_pass_reason {
#define GRO_PASS_ENUM(name, str) GRO_PASS_##name,
	GRO_PASS_REASONS(GRO_PASS_ENUM)
#undef GRO_PASS_ENUM
	GRO_PASS_REASON_COUNT
};

struct gro_stats {
	uint64_t segments_in;     /* frames given to gro_receive() */
	uint64_t frames_out;      /* frames emitted, merged or not */
	uint64_t merged_frames;   /* frames emitted carrying >= 2 segments */
	uint64_t merged_segments; /* segments inside those frames */
	uint64_t bytes_out;       /* sum of pkt_len() of emitted frames */
	/* Emitted frames by segments carried: [0] 1, [1] 2-3, [2] 4-7, ...
	 * [k] 2^k .. 2^(k+1)-1, the last bucket open-ended. */
	uint64_t segs_per_frame[GRO_SIZE_BUCKETS];
	uint64_t flushes[GRO_FLUSH_REASON_COUNT];
	uint64_t passthrough[GRO_PASS_REASON_COUNT];
	uint32_t flows_held;      /* runs held right now */
};

struct gro_table;

/* Constructor/destructor, in the house style (pkt_pool_create,
 * fdb_create, vni_table_create): gro_create() returns 0 with the table in
 * *out, or a negative errno with *out = NULL: -EINVAL for a bad config (no
 * emit, max_size > 65536, max_flows > GRO_MAX_FLOWS), -ENOMEM when an
 * allocation fails.  errno is not the channel, so a caller can return the
 * value as it is.  All the table's memory is allocated here.
 * gro_destroy() frees held runs without emitting them (call gro_flush()
 * first to deliver them); gro_destroy(NULL) is a no-op. */
int gro_create(const struct gro_config *config, struct gro_table **out);
void gro_destroy(struct gro_table *table);

/* Takes one frame (and the caller's reference) with the key the caller
 * parsed for it, or NULL for a frame never parsed (it passes through).  GRO
 * copies the key of a run still held when the call returns (each slot
 * holds one, allocated by gro_create()), so `key` need only live during the
 * call.
 * Emits whatever completes because of it: the held run of its flow and/or
 * the frame itself. */
void gro_receive(struct gro_table *table, struct pkt *pkt, const struct flow_key *key, uint64_t now_ns);

enum gro_flush_scope {
	GRO_FLUSH_ALL,      /* end of an input batch (counted as batch_end) */
	GRO_FLUSH_EXPIRED,  /* runs whose deadline (first segment + hold_ns)
			     * is <= now_ns, counted as timeout */
};
void gro_flush(struct gro_table *table, enum gro_flush_scope scope, uint64_t now_ns);

/* gro_receive(pkts[i], &keys[i]) on each frame, prefetching the next ones:
 * the fast way to feed a receive batch.  `keys` is an array parallel to
 * `pkts`, or NULL when no frame was parsed; like gro_receive()'s key it
 * need only live during the call.  Runs stay held. */
void gro_receive_burst(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
		       uint64_t now_ns);

/* gro_receive_burst(), then gro_flush(GRO_FLUSH_ALL). */
void gro_receive_batch(struct gro_table *table, struct pkt **pkts, const struct flow_key *keys, uint32_t n,
		       uint64_t now_ns);

/* The earliest deadline (first segment's arrival + hold_ns) of any held
 * run, on the caller's clock, or UINT64_MAX when no run is held: a daemon
 * polls with a timeout that ends then and calls
 * gro_flush(GRO_FLUSH_EXPIRED) when it wakes. */
uint64_t gro_next_expiry_ns(const struct gro_table *table);

void gro_get_stats(const struct gro_table *table, struct gro_stats *out);
/* Adds b's counters to st (tables replaced, or many workers' tables);
 * flows_held adds up too. */
void gro_stats_add(struct gro_stats *st, const struct gro_stats *b);

/* Decapsulates a tunnelled frame exactly as GRO leaves one it does not
 * merge: the data pointer moves to the inner Ethernet header, the inner
 * offsets become the plain ones (l2_ofs 0, l3, l4, payload), tunnel_ofs and
 * inner_* become absent; pkt->tunnel, the offload metadata and every byte
 * are kept.  A frame without tunnel_ofs/inner_l2_ofs is left untouched.
 * For a datapath with GRO off, so its frames reach a TAP in the same shape
 * as with GRO on (GRO itself calls it on everything it emits). */
void gro_decap_passthrough(struct pkt *pkt);

/* A TCP segment bigger than the MTU that arrived whole -- a peer's GSO
 * packet that crossed a veth without being cut and reached our UDP socket
 * as one datagram -- gets the metadata gro_complete() gives a merged frame
 * (NEEDS_CSUM with the pseudo-header seed, TCPV4/TCPV6 (| ECN after CWR),
 * gso_size = mtu - IP header - TCP header, hdr_len, csum_start/offset), so
 * the VM's kernel can segment it again, as if its own GRO had made it.
 * Only a decapsulated frame (l3_ofs/l4_ofs set, IPv4 without options or
 * fragment bits, or IPv6 straight to TCP) whose checksum was verified
 * (ol.flags DATA_VALID) and that has no GSO metadata; `mtu` is the L3 MTU
 * of the port it leaves by.  True if the frame was marked. */
bool gro_mark_big_tcp(struct pkt *pkt, uint32_t mtu);

/* Operator-visible names; "invalid" out of range. */
const char *gro_flush_reason_name(enum gro_flush_reason reason);
const char *gro_pass_reason_name(enum gro_pass_reason reason);

#endif
