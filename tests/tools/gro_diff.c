/* gro_diff: differential test of our GRO (src/offload/gro.c) against the
 * running Linux kernel's GRO, on the same TCP segment sequences.
 *
 *   gro_diff [-r REPEATS] [-c CASE] [-x] [-l] [-v]
 *
 * Run as root inside a fresh network namespace (tests/netns/
 * test_gro_vs_kernel.sh does that).  For each case the same frames go
 *
 *   - to the kernel: written one by one into a TAP opened with IFF_NAPI,
 *     so they pass through napi_gro_receive() of the tap's NAPI; an
 *     AF_PACKET socket with PACKET_VNET_HDR on the tap reads what GRO made
 *     of them (frame length = boundaries, virtio_net_hdr = gso_size/type);
 *   - to ours: flow_extract() + gro_receive_batch() as one batch.
 *
 * and per flow the sequence of output frames (first seq, length, gso_size,
 * gso_type) must be equal.  With -x the cases marked for it run again with
 * every frame in VXLAN to the tap's address, where a vxlan device listens
 * (the kernel's udp_gro_receive -> vxlan_gro_receive path); lengths are
 * then compared on the inner frame, which is what ours emits.
 *
 * Where the kernel legitimately differs, the case says so (gd_case.note):
 * CMP_ANY_ORDER cases compare the same frames in any order, CMP_REPORT
 * cases (kernel version-specific, hash-specific, or a documented limit of
 * ours) print both sides and check ours against its own documented rules.
 *
 * Making the kernel see one burst
 * ===============================
 *
 * A write to an IFF_NAPI tap queues the skb and schedules the NAPI, which
 * runs at the write's local_bh_enable(): one poll per write, and a plain
 * poll ends with napi_complete_done() flushing GRO, so nothing would ever
 * merge.  With a non-zero gro_flush_timeout, napi_complete_done() only
 * flushes runs whose first segment arrived in an earlier jiffy (flush_old)
 * and arms a repoll timer that flushes the rest when it fires
 * (net/core/dev.c, 6.x).  So with gro_flush_timeout = FLUSH_TIMEOUT_NS the
 * writes of one case behave as one NAPI batch, provided no jiffy tick falls
 * inside the burst.  That is checked, not hoped for: CLOCK_MONOTONIC_COARSE
 * advances on the same tick as jiffies, so it is read before the first
 * write and after the last one, and a burst during which it moved is
 * retried (counted as "retried" in the output).  The timer (20 ms) is
 * longer than any jiffy, so it cannot fire inside an accepted burst.
 *
 * Each case runs REPEATS times (default 2) on the kernel; every accepted run
 * must give the same frames, else the case is reported as nondeterministic
 * (a failure: the comparison would mean nothing).
 *
 * Exit status: 0 all compared cases agree (or differ only where a case
 * says the kernel's behaviour is version- or hash-specific, or ours has a
 * documented limitation), 1 a mismatch or unstable kernel output, 2 a setup
 * failure, 77 this kernel cannot run the test (no IFF_NAPI, or the kernel
 * did not merge a plain in-order burst: the method above does not hold). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "frame_builder.h"
#include "offload/gro.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"

#include "frame_builder.h"

enum {
	/* Input frames per case.  Below the NAPI weight (64) on purpose: a
	 * poll that uses its whole budget flushes held runs by age (all of
	 * them when HZ < 1000), which would split a case. */
	MAX_SEGS = 63,
	MAX_OUT = MAX_SEGS,       /* output frames per case (never more than input) */
	FRAME_CAP = 2048,         /* one input segment */
	RX_CAP = 70000,           /* one received (merged) frame + vnet hdr */
	MSS = 1448,
	MAX_ATTEMPTS = 12,        /* kernel bursts tried per case (per round) */
	UNSTABLE_ROUNDS = 3,      /* rounds of bursts before a self-inconsistent kernel is UNSTABLE */
	RX_TIMEOUT_MS = 400,      /* give up waiting for the kernel's frames */
};

/* Kernel: the repoll timer that flushes the held runs after a burst.  Longer
 * than a jiffy at any HZ, so it never fires inside an accepted burst. */
#define FLUSH_TIMEOUT_NS 20000000ull
#define TAP_NAME "gdiff0"

static bool verbose;

/* ---- cases ------------------------------------------------------------- */

struct seg_list {
	struct fb_frame f[MAX_SEGS];
	unsigned n;
	/* VXLAN runs: outer headers of segment i in send order (outer IPv4
	 * ID advancing by one); VXLAN-only cases may change them. */
	struct fb_vxlan outer[MAX_SEGS];
};

/* TCP timestamp options (NOP NOP TS): the second one is a TSval tick. */
static const uint8_t ts_opt_a[12] = { 1, 1, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 7 };
static const uint8_t ts_opt_b[12] = { 1, 1, 8, 10, 0, 0, 0x10, 1, 0, 0, 0, 7 };

/* One flow's template: seq and IP ID advance per appended segment. */
struct stream {
	struct fb_frame t;
};

static void stream_init(struct stream *s, uint8_t family, uint16_t src_port, const uint8_t *dst_mac)
{
	fb_frame_init(&s->t, family, IP_PROTO_TCP);
	memcpy(s->t.dst_mac, dst_mac, 6);
	/* 198.51.100.2 -> .3 (the tap has .1): not local and forwarding is
	 * off, so after GRO and AF_PACKET the stack drops them quietly (no
	 * RSTs).  IPv6 likewise 2001:db8::2 -> ::3. */
	if (family == 4) {
		const uint8_t src[4] = { 198, 51, 100, 2 }, dst[4] = { 198, 51, 100, 3 };
		memcpy(s->t.src_ip, src, 4);
		memcpy(s->t.dst_ip, dst, 4);
	} else {
		s->t.src_ip[0] = s->t.dst_ip[0] = 0x20;
		s->t.src_ip[1] = s->t.dst_ip[1] = 0x01;
		s->t.src_ip[2] = s->t.dst_ip[2] = 0x0d;
		s->t.src_ip[3] = s->t.dst_ip[3] = 0xb8;
		s->t.src_ip[15] = 2;
		s->t.dst_ip[15] = 3;
	}
	s->t.src_port = src_port;
	s->t.dst_port = 5001;
	s->t.seq = 100000;
	s->t.ack = 777;
	s->t.ip_id = 1000;
	s->t.tcp_opts = ts_opt_a;
	s->t.tcp_opts_len = sizeof(ts_opt_a);
}

/* Appends the next segment of `s` with `payload` bytes; the returned frame
 * may be tweaked (flags...) without touching the stream. */
static struct fb_frame *add(struct seg_list *l, struct stream *s, size_t payload)
{
	if (l->n >= MAX_SEGS) {
		fprintf(stderr, "gro_diff: case too long\n");
		exit(2);
	}
	struct fb_frame *f = &l->f[l->n++];
	*f = s->t;
	f->payload_len = payload;
	f->payload_seed = (uint8_t)s->t.seq;
	s->t.seq += (uint32_t)payload;
	s->t.ip_id++;
	return f;
}

static void add_run(struct seg_list *l, struct stream *s, unsigned count, size_t payload)
{
	for (unsigned i = 0; i < count; i++)
		add(l, s, payload);
}

struct case_ctx {
	struct seg_list *l;
	uint8_t family;
	const uint8_t *dst_mac;
};

/* Outer headers of the VXLAN cases: to the tap's address, where a vxlan
 * device listens on port 4789 (the script makes it). */
static void vxlan_outer(struct fb_vxlan *vx, const uint8_t *dst_mac)
{
	static const uint8_t src[4] = { 198, 51, 100, 2 }, dst[4] = { 198, 51, 100, 1 };
	fb_vxlan_init(vx, 4, 42);
	memcpy(vx->dst_mac, dst_mac, 6);
	memcpy(vx->src_ip, src, 4);
	memcpy(vx->dst_ip, dst, 4);
	vx->ip_id = 3000;
}

/* Every segment's outer headers: `vx`, the IPv4 ID advancing per segment
 * in send order, as a sender's GSO makes them. */
static void seg_list_set_outer(struct seg_list *l, const struct fb_vxlan *vx)
{
	for (unsigned i = 0; i < MAX_SEGS; i++) {
		l->outer[i] = *vx;
		l->outer[i].ip_id = (uint16_t)(vx->ip_id + i);
	}
}

static void one_stream(const struct case_ctx *c, struct stream *s)
{
	stream_init(s, c->family, 40000, c->dst_mac);
}

static void case_in_order(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 8, MSS);
}

static void case_short_last(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 6, MSS);
	add(c->l, &s, 700);     /* ends the run */
	add_run(c->l, &s, 3, MSS); /* a new one */
}

static void case_psh_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH;
	add_run(c->l, &s, 4, MSS);
}

static void case_psh_first(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH; /* never starts a run */
	add_run(c->l, &s, 4, MSS);
}

static void case_fin_last(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_FIN;
}

static void case_reorder(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 8, MSS);
	struct fb_frame tmp = c->l->f[3];
	c->l->f[3] = c->l->f[4];
	c->l->f[4] = tmp;
}

static void case_retransmit(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	c->l->f[c->l->n] = c->l->f[2]; /* segment 2 again */
	c->l->n++;
	add_run(c->l, &s, 3, MSS);
}

static void case_two_flows(const struct case_ctx *c)
{
	struct stream a, b;
	stream_init(&a, c->family, 40000, c->dst_mac);
	stream_init(&b, c->family, 40001, c->dst_mac);
	b.t.seq = 5000000;
	for (int i = 0; i < 6; i++) {
		add(c->l, &a, MSS);
		add(c->l, &b, MSS);
	}
}

static void case_four_flows_psh(const struct case_ctx *c)
{
	struct stream s[4];
	for (int k = 0; k < 4; k++) {
		stream_init(&s[k], c->family, (uint16_t)(40000 + k), c->dst_mac);
		s[k].t.seq = 1000000u * (uint32_t)(k + 1);
	}
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 4; k++) {
			struct fb_frame *f = add(c->l, &s[k], MSS);
			if (i == k)
				f->tcp_flags |= TCP_PSH;
		}
}

static void case_ip_id_jump(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.ip_id += 100;
	add_run(c->l, &s, 4, MSS);
}

static void case_no_df_inc(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.frag_off = 0; /* IDs increment, DF clear: the classic case */
	add_run(c->l, &s, 6, MSS);
}

static void case_ip_id_wrap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.ip_id = 0xfffd;
	add_run(c->l, &s, 6, MSS);
}

/* Fixed IDs after the first segment: ID of segment 1 equals segment 0. */
static void fixed_id(const struct case_ctx *c, bool df)
{
	struct stream s;
	one_stream(c, &s);
	if (!df)
		s.t.frag_off = 0;
	for (int i = 0; i < 6; i++) {
		add(c->l, &s, MSS);
		s.t.ip_id--; /* undo the increment */
	}
}

static void case_fixed_id_df(const struct case_ctx *c) { fixed_id(c, true); }
static void case_fixed_id_nodf(const struct case_ctx *c) { fixed_id(c, false); }

/* Fixed for a while, then incrementing: mainline decides at the 2nd
 * segment. */
static void case_fixed_then_inc(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	for (int i = 0; i < 3; i++) {
		add(c->l, &s, MSS);
		s.t.ip_id--;
	}
	add_run(c->l, &s, 3, MSS);
}

static void case_df_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.frag_off = 0;
	add_run(c->l, &s, 3, MSS);
}

static void case_ts_tick(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.tcp_opts = ts_opt_b;
	add_run(c->l, &s, 4, MSS);
}

static void case_no_options(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_opts = NULL;
	s.t.tcp_opts_len = 0;
	add_run(c->l, &s, 8, MSS + 12);
}

static void case_options_dropped(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_opts = NULL; /* doff changes */
	s.t.tcp_opts_len = 0;
	add_run(c->l, &s, 3, MSS);
}

static void case_ttl_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 4, MSS);
	s.t.ttl = 63;
	add_run(c->l, &s, 4, MSS);
}

static void case_tos_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tos = 0x10;
	add_run(c->l, &s, 3, MSS);
}

static void case_ecn_ce_mark(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tos = 0x02; /* ECT(0) */
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tos = 0x03; /* CE on one segment */
	add_run(c->l, &s, 3, MSS);
}

static void case_flow_label_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.ipv6_label = 0x12345;
	add_run(c->l, &s, 3, MSS);
	s.t.ipv6_label = 0x54321;
	add_run(c->l, &s, 3, MSS);
}

static void case_ack_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.ack += 1000;
	add_run(c->l, &s, 3, MSS);
}

static void case_window_change(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.window = 1000; /* window is not compared: still one run */
	add_run(c->l, &s, 3, MSS);
}

static void case_ece_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_flags |= TCP_ECE;
	add_run(c->l, &s, 6, MSS);
}

static void case_ece_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_flags |= TCP_ECE;
	add_run(c->l, &s, 3, MSS);
}

static void case_cwr_first(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add(c->l, &s, MSS)->tcp_flags |= TCP_CWR; /* gso_type gets ECN */
	add_run(c->l, &s, 5, MSS);
}

static void case_cwr_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_CWR;
	add_run(c->l, &s, 3, MSS);
}

static void case_urg_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_URG;
	add_run(c->l, &s, 3, MSS);
}

static void case_pure_acks(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	for (int i = 0; i < 5; i++) {
		add(c->l, &s, 0);
		s.t.ack += 2896;
	}
}

static void case_data_then_ack(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, 0); /* same ack, no payload */
	add_run(c->l, &s, 3, MSS);
}

static void case_mss_grows(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, 1000);
	add_run(c->l, &s, 3, MSS); /* larger than the run's mss: flush */
}

static void case_small_mss(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 12, 536);
}

/* 50 full segments: the 64 KB cap (gro_max_size 65536) splits them. */
static void case_size_cap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 50, MSS);
}

static void case_bad_csum_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->csum = FB_CSUM_BAD;
	add_run(c->l, &s, 3, MSS);
}

static void case_padded_short(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, 1)->pad_to = 60; /* Ethernet padding after 1 byte */
}

static void case_window_update_psh(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.window = 65000;
	add(c->l, &s, MSS)->tcp_flags |= TCP_PSH;
}

static void case_ns_bit_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.tcp_flags |= TCP_NS; /* the reserved/AE bit next to doff */
	add_run(c->l, &s, 3, MSS);
}

static void case_rst_middle(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	add(c->l, &s, MSS)->tcp_flags |= TCP_RST;
	add_run(c->l, &s, 3, MSS);
}

static void case_seq_gap(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	s.t.seq += MSS; /* one segment lost */
	add_run(c->l, &s, 4, MSS);
}

static void case_ip_options(const struct case_ctx *c)
{
	static const uint8_t nop_eol[4] = { 1, 1, 1, 0 };
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 3, MSS);
	struct fb_frame *f = add(c->l, &s, MSS - 4);
	f->ip_opts = nop_eol;
	f->ip_opts_len = sizeof(nop_eol);
	add_run(c->l, &s, 3, MSS);
}

/* IPv6 destination options on every segment: the kernel pulls the
 * extension headers and GROs through them (ipv6_gro_receive). */
static void case_ipv6_dstopts_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.n_ipv6_ext = 1;
	s.t.ipv6_ext[0].type = IP_PROTO_DSTOPTS;
	s.t.ipv6_ext[0].len8 = 0;
	add_run(c->l, &s, 6, MSS - 8);
}

/* More flows than one kernel hash bucket holds (8): which run is evicted
 * depends on the bucket hash, so only totals are comparable here. */
static void case_ten_flows(const struct case_ctx *c)
{
	struct stream s[10];
	for (int k = 0; k < 10; k++) {
		stream_init(&s[k], c->family, (uint16_t)(41000 + k), c->dst_mac);
		s[k].t.seq = 1000000u * (uint32_t)(k + 1);
	}
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 10; k++)
			add(c->l, &s[k], MSS);
}

static void case_cwr_all(const struct case_ctx *c)
{
	struct stream s;
	one_stream(c, &s);
	s.t.tcp_flags |= TCP_CWR;
	add_run(c->l, &s, 4, MSS);
}

/* VXLAN-only: 6 segments of one flow, the outer headers of segments 3..5
 * changed by `change`. */
static void outer_change(const struct case_ctx *c, void (*change)(struct fb_vxlan *vx, unsigned i))
{
	struct stream s;
	one_stream(c, &s);
	add_run(c->l, &s, 6, MSS);
	for (unsigned i = 0; i < 6; i++)
		change(&c->l->outer[i], i);
}

static void set_ttl(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->ttl = 63; }
static void set_tos(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->tos = 0x10; }
static void set_df_off(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->frag_off = 0; }
static void set_id_jump(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->ip_id += 50; }
static void set_id_fixed(struct fb_vxlan *vx, unsigned i) { vx->ip_id = (uint16_t)(vx->ip_id - i); }
static void set_vni(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->vni = 43; }
static void set_sport(struct fb_vxlan *vx, unsigned i) { if (i >= 3) vx->src_port = 49153; }
static void set_csum_all(struct fb_vxlan *vx, unsigned i) { (void)i; vx->udp_csum = true; }
static void set_csum_some(struct fb_vxlan *vx, unsigned i) { vx->udp_csum = i >= 3; }

static void case_vx_outer_ttl(const struct case_ctx *c) { outer_change(c, set_ttl); }
static void case_vx_outer_tos(const struct case_ctx *c) { outer_change(c, set_tos); }
static void case_vx_outer_df(const struct case_ctx *c) { outer_change(c, set_df_off); }
static void case_vx_outer_id_jump(const struct case_ctx *c) { outer_change(c, set_id_jump); }
static void case_vx_outer_id_fixed(const struct case_ctx *c) { outer_change(c, set_id_fixed); }
static void case_vx_vni_change(const struct case_ctx *c) { outer_change(c, set_vni); }
static void case_vx_sport_change(const struct case_ctx *c) { outer_change(c, set_sport); }
static void case_vx_udp_csum(const struct case_ctx *c) { outer_change(c, set_csum_all); }
static void case_vx_udp_csum_mixed(const struct case_ctx *c) { outer_change(c, set_csum_some); }

typedef void case_fn(const struct case_ctx *c);

/* Inner families; FVX: also run with each frame in VXLAN (option -x);
 * VXO: only in VXLAN (the case changes outer headers). */
enum { F4 = 1, F6 = 2, FVX = 4, VXO = 8 };

/* Where the kernel legitimately differs from ours, the case says why and
 * how much of the output is still compared. */
enum case_compare {
	CMP_EXACT,      /* per flow: the same frames in the same order */
	CMP_ANY_ORDER,  /* per flow: the same frames, order free (see note) */
	CMP_REPORT,     /* printed, never a failure (version-specific, see note) */
};

/* The cases where the kernel's CWR handling matters.  It changed twice:
 *  - up to 6.17: a CWR segment flushes the held run and may start a run;
 *    later segments without CWR merge into it (gso_type gets ECN);
 *  - 6.18 (AccECN series, "flags ^ th2" mask no longer excludes CWR): a
 *    CWR change also flushes, so a CWR segment always travels alone;
 *  - 7.0 (ab4c8b6f "gro: flushing when CWR is set negatively affects
 *    AccECN"): CWR no longer flushes by itself; runs of CWR segments
 *    merge, a CWR change flushes.
 * Ours follows shared/reference/gro-gso-rules.md (the first form), which
 * GSO undoes exactly (TCP_ECN: CWR on the first segment only). */
#define CWR_NOTE "the kernel's CWR rule is version-specific (<=6.17 / 6.18 / 7.0 differ)"

static const struct gd_case {
	const char *name;
	case_fn *build;
	unsigned families;
	enum case_compare compare;
	const char *note;
	/* CMP_REPORT cases: what ours must give anyway, by our documented
	 * rules (segments per frame, flows by port, e.g. "3,4"); NULL when
	 * that depends on our hash. */
	const char *ours_expect;
} cases[] = {
	{ "in_order", case_in_order, F4 | F6 | FVX },
	{ "short_last", case_short_last, F4 | F6 | FVX },
	{ "psh_middle", case_psh_middle, F4 | F6 | FVX },
	{ "psh_first", case_psh_first, F4 | F6 },
	{ "fin_last", case_fin_last, F4 | F6 },
	{ "reorder_swap", case_reorder, F4 | F6 | FVX },
	{ "retransmit", case_retransmit, F4 | F6 },
	{ "two_flows", case_two_flows, F4 | F6 | FVX },
	{ "four_flows_psh", case_four_flows_psh, F4 | F6 },
	{ "ip_id_jump", case_ip_id_jump, F4 | FVX },
	{ "ip_id_wrap", case_ip_id_wrap, F4 },
	{ "no_df_inc", case_no_df_inc, F4 | FVX },
	{ "fixed_id_df", case_fixed_id_df, F4 | FVX },
	{ "fixed_id_nodf", case_fixed_id_nodf, F4 },
	{ "fixed_then_inc", case_fixed_then_inc, F4 },
	{ "df_change", case_df_change, F4 },
	{ "ts_tick", case_ts_tick, F4 | F6 | FVX },
	{ "no_options", case_no_options, F4 | F6 },
	{ "options_dropped", case_options_dropped, F4 | F6 },
	{ "ttl_change", case_ttl_change, F4 | F6 | FVX },
	{ "tos_change", case_tos_change, F4 | F6 },
	{ "ecn_ce_mark", case_ecn_ce_mark, F4 | F6 },
	{ "flow_label_change", case_flow_label_change, F6 },
	{ "ack_change", case_ack_change, F4 | F6 },
	{ "window_change", case_window_change, F4 | F6 },
	{ "ece_all", case_ece_all, F4 | F6 },
	{ "ece_middle", case_ece_middle, F4 | F6 },
	{ "cwr_first", case_cwr_first, F4 | F6, CMP_REPORT, CWR_NOTE, "6" },
	{ "cwr_middle", case_cwr_middle, F4 | F6, CMP_REPORT, CWR_NOTE, "3,4" },
	{ "cwr_all", case_cwr_all, F4 | F6, CMP_REPORT, CWR_NOTE, "1,1,1,1" },
	{ "urg_middle", case_urg_middle, F4 | F6 },
	{ "pure_acks", case_pure_acks, F4 | F6 | FVX },
	{ "data_then_ack", case_data_then_ack, F4 | F6 },
	{ "mss_grows", case_mss_grows, F4 | F6 },
	{ "small_mss", case_small_mss, F4 | F6 },
	{ "size_cap", case_size_cap, F4 | F6 | FVX },
	/* The kernel checks the TCP checksum (and IPv4 options) before it
	 * looks up the flow, so such a segment goes up at once, ahead of the
	 * run still held; ours completes the run first so that the flow
	 * stays in order (gro.h "Never held").  Same frames, other order. */
	{ "bad_csum_middle", case_bad_csum_middle, F4 | F6, CMP_ANY_ORDER,
	  "kernel delivers a bad-checksum segment ahead of the held run" },
	{ "ip_options", case_ip_options, F4, CMP_ANY_ORDER,
	  "kernel delivers an IPv4-options segment ahead of the held run" },
	{ "padded_short", case_padded_short, F4 },
	{ "window_update_psh", case_window_update_psh, F4 | F6 },
	{ "ns_bit_middle", case_ns_bit_middle, F4 | F6 },
	{ "rst_middle", case_rst_middle, F4 | F6 },
	{ "seq_gap", case_seq_gap, F4 | F6 },
	/* A known limitation of ours (gro.h: IPv6 extension headers are
	 * never held); the kernel merges through identical ones. */
	{ "ipv6_dstopts_all", case_ipv6_dstopts_all, F6, CMP_REPORT,
	  "ours never holds IPv6 with extension headers; the kernel merges through them",
	  "1,1,1,1,1,1" },
	/* The kernel holds at most 8 runs per hash bucket and evicts the
	 * oldest of the bucket; tun gives these skbs no hash, so all ten
	 * flows share bucket 0 and evictions depend on the bucket layout,
	 * which ours does not copy (its own hash, 8 x 8). */
	{ "outer_ttl", case_vx_outer_ttl, F4 | F6 | VXO },
	{ "outer_tos", case_vx_outer_tos, F4 | VXO },
	{ "outer_df_off", case_vx_outer_df, F4 | VXO },
	{ "outer_id_jump", case_vx_outer_id_jump, F4 | F6 | VXO },
	{ "outer_id_fixed", case_vx_outer_id_fixed, F4 | F6 | VXO },
	/* Another VNI or outer source port is another flow with the same
	 * inner ports: the order between the two runs is the hash table's. */
	{ "vni_change", case_vx_vni_change, F4 | VXO, CMP_ANY_ORDER,
	  "two VNIs are two flows; the order between flows is the table's" },
	{ "outer_sport_change", case_vx_sport_change, F4 | VXO, CMP_ANY_ORDER,
	  "two outer source ports are two flows; the order between flows is the table's" },
	{ "outer_udp_csum", case_vx_udp_csum, F4 | F6 | VXO },
	{ "outer_udp_csum_mixed", case_vx_udp_csum_mixed, F4 | VXO },
	{ "ten_flows", case_ten_flows, F4, CMP_REPORT,
	  "eviction from a full kernel hash bucket depends on the kernel's hash" },
};

/* ---- frames and results -------------------------------------------------- */

struct wire {
	uint8_t bytes[MAX_SEGS][FRAME_CAP];
	size_t len[MAX_SEGS];
	unsigned n;
};

/* One output frame, described by what GRO decides. */
struct out_frame {
	uint16_t src_port;   /* flow */
	uint32_t seq;        /* first segment */
	uint32_t len;        /* whole frame, Ethernet header included */
	uint16_t gso_size;
	uint8_t gso_type;    /* VIRTIO_NET_HDR_GSO_* incl. ECN */
	uint32_t payload;    /* TCP payload bytes */
};

struct result {
	struct out_frame f[MAX_OUT];
	unsigned n;
	bool overflow;
};

/* The frames of a case; `vxlan` wraps each in l->outer[i]. */
static int build_wire(const struct seg_list *l, bool vxlan, struct wire *w)
{
	static uint8_t inner[FRAME_CAP];
	w->n = 0;
	for (unsigned i = 0; i < l->n; i++) {
		size_t len;
		if (vxlan) {
			len = fb_build(&l->f[i], inner, sizeof(inner), NULL);
			if (len)
				len = fb_wrap_vxlan(&l->outer[i], inner, len, w->bytes[i], FRAME_CAP);
		} else {
			len = fb_build(&l->f[i], w->bytes[i], FRAME_CAP, NULL);
		}
		if (len == 0)
			return -EINVAL;
		w->len[i] = len;
		w->n++;
	}
	return 0;
}

/* A VXLAN frame (outer IPv4 without options, UDP to port 4789) is seen
 * by its inner frame: lengths are compared on the inner frame, which is
 * what ours emits (decapsulated). */
static void frame_decap(const uint8_t **p, size_t *len)
{
	const uint8_t *f = *p;
	if (*len < VXLAN_ENCAP_LEN_IPV4 + 14 || f[12] != 0x08 || f[13] != 0x00 || f[14] != 0x45 ||
	    f[14 + 9] != IP_PROTO_UDP || (f[36] << 8 | f[37]) != VXLAN_DEFAULT_PORT)
		return;
	*p += VXLAN_ENCAP_LEN_IPV4;
	*len -= VXLAN_ENCAP_LEN_IPV4;
}

/* Port and seq from the first bytes of a frame; false if not TCP over
 * IPv4/IPv6 without extension headers. */
static bool frame_tcp_id(const uint8_t *p, size_t len, uint16_t *src_port, uint32_t *seq,
			 uint32_t *payload)
{
	if (len < 14 + 20 + 20)
		return false;
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	size_t l4, l3_end;
	if (type == ETH_TYPE_IPV4 && (p[14] >> 4) == 4 && p[14 + 9] == IP_PROTO_TCP) {
		l4 = 14 + (size_t)(p[14] & 0xf) * 4;
		l3_end = 14 + (size_t)(p[16] << 8 | p[17]);
	} else if (type == ETH_TYPE_IPV6 && len >= 14 + 40 + 20) {
		uint8_t next = p[14 + 6];
		l4 = 14 + 40;
		l3_end = l4 + (size_t)(p[18] << 8 | p[19]);
		/* Options and routing headers, as the ext header cases use. */
		while (next == IP_PROTO_HOPOPTS || next == IP_PROTO_DSTOPTS || next == IP_PROTO_ROUTING) {
			if (l4 + 8 > len)
				return false;
			next = p[l4];
			l4 += ((size_t)p[l4 + 1] + 1) * 8;
		}
		if (next != IP_PROTO_TCP)
			return false;
	} else {
		return false;
	}
	if (l4 + 20 > len)
		return false;
	size_t doff = (size_t)(p[l4 + 12] >> 4) * 4;
	*src_port = (uint16_t)(p[l4] << 8 | p[l4 + 1]);
	*seq = (uint32_t)p[l4 + 4] << 24 | (uint32_t)p[l4 + 5] << 16 | (uint32_t)p[l4 + 6] << 8 | p[l4 + 7];
	*payload = l3_end > l4 + doff ? (uint32_t)(l3_end - l4 - doff) : 0;
	return true;
}

/* Segments a frame carries: payload / gso_size rounded up, 1 if not merged. */
static unsigned frame_segments(const struct out_frame *f)
{
	return f->gso_size ? (f->payload + f->gso_size - 1) / f->gso_size : 1;
}

/* "3,4": segments per frame, the form of gd_case.ours_expect. */
static void result_shape(const struct result *r, char *buf, size_t cap)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < r->n && used < cap; i++)
		used += (size_t)snprintf(buf + used, cap - used, "%s%u", i ? "," : "",
					 frame_segments(&r->f[i]));
}

static void result_add(struct result *r, const struct out_frame *f)
{
	if (r->n >= MAX_OUT) {
		r->overflow = true;
		return;
	}
	r->f[r->n++] = *f;
}

/* Stable sort by flow: the order within a flow is GRO's business, the order
 * between flows is the hash table's (different in the kernel and here). */
static void result_sort(struct result *r)
{
	for (unsigned i = 1; i < r->n; i++) {
		struct out_frame x = r->f[i];
		unsigned j = i;
		while (j > 0 && r->f[j - 1].src_port > x.src_port) {
			r->f[j] = r->f[j - 1];
			j--;
		}
		r->f[j] = x;
	}
}

/* Within each flow, by seq: for cases whose order legitimately differs. */
static void result_sort_seq(struct result *r)
{
	for (unsigned i = 1; i < r->n; i++) {
		struct out_frame x = r->f[i];
		unsigned j = i;
		while (j > 0 && (r->f[j - 1].src_port > x.src_port ||
				 (r->f[j - 1].src_port == x.src_port &&
				  (int32_t)(r->f[j - 1].seq - x.seq) > 0))) {
			r->f[j] = r->f[j - 1];
			j--;
		}
		r->f[j] = x;
	}
}

static bool result_equal(const struct result *a, const struct result *b)
{
	if (a->n != b->n || a->overflow || b->overflow)
		return false;
	for (unsigned i = 0; i < a->n; i++)
		if (a->f[i].src_port != b->f[i].src_port || a->f[i].seq != b->f[i].seq ||
		    a->f[i].len != b->f[i].len || a->f[i].gso_size != b->f[i].gso_size ||
		    a->f[i].gso_type != b->f[i].gso_type)
			return false;
	return true;
}

static const char *gso_name(uint8_t t)
{
	switch (t) {
	case VIRTIO_NET_HDR_GSO_NONE: return "-";
	case VIRTIO_NET_HDR_GSO_TCPV4: return "tcp4";
	case VIRTIO_NET_HDR_GSO_TCPV6: return "tcp6";
	case VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN: return "tcp4+ecn";
	case VIRTIO_NET_HDR_GSO_TCPV6 | VIRTIO_NET_HDR_GSO_ECN: return "tcp6+ecn";
	default: return "?";
	}
}

static void result_print(const char *who, const struct result *r, uint32_t seq_base)
{
	printf("    %-6s %2u frames:", who, r->n);
	for (unsigned i = 0; i < r->n; i++)
		printf(" [p%u +%u %u/%u %s]", r->f[i].src_port, r->f[i].seq - seq_base, r->f[i].len,
		       r->f[i].gso_size, gso_name(r->f[i].gso_type));
	printf("%s\n", r->overflow ? " (overflow)" : "");
}

/* ---- our GRO ------------------------------------------------------------ */

struct ours {
	struct pkt_pool *pool;
	struct result *res;
};

static void ours_emit(void *aux, struct pkt *pkt, const struct flow_key *key)
{
	struct ours *o = aux;
	(void)key; /* the comparison is of the frames themselves */
	uint8_t head[128];
	uint32_t head_len = pkt_len(pkt) < sizeof(head) ? pkt_len(pkt) : sizeof(head);
	struct out_frame f = { .len = pkt_len(pkt), .gso_size = pkt->ol.gso_size,
			       .gso_type = pkt->ol.gso_type };
	if (pkt_copy_out(pkt, 0, head_len, head) == 0 &&
	    frame_tcp_id(head, head_len, &f.src_port, &f.seq, &f.payload))
		result_add(o->res, &f);
	pkt_free(pkt);
}

static int run_ours(const struct wire *w, struct result *res)
{
	struct ours o = { .res = res };
	struct pkt *pkts[MAX_SEGS];
	static struct flow_key keys[MAX_SEGS];
	unsigned n = 0;
	int err = -ENOMEM;

	memset(res, 0, sizeof(*res));
	err = pkt_pool_create(2 * MAX_SEGS, &o.pool);
	if (err < 0)
		return err;
	struct gro_config cfg = { .emit = ours_emit, .emit_aux = &o };
	struct gro_table *gro;
	err = gro_create(&cfg, &gro);
	if (err < 0)
		goto out_pool;
	for (; n < w->n; n++) {
		pkts[n] = pkt_alloc(o.pool);
		if (!pkts[n] || pkt_set_data(pkts[n], w->bytes[n], (uint32_t)w->len[n]) != 0) {
			pkt_free(pkts[n]);
			err = -ENOMEM;
			goto out_pkts;
		}
		/* The datapath drops what the parser refuses before GRO;
		 * no case builds such a frame (TCP checksums are GRO's
		 * business, not the parser's). */
		if (flow_extract(pkts[n], VXLAN_DEFAULT_PORT, &keys[n]) != DROP_NONE) {
			err = -EINVAL;
			n++;
			goto out_pkts;
		}
	}
	gro_receive_batch(gro, pkts, keys, n, 0);
	n = 0;
	err = 0;
out_pkts:
	for (unsigned i = 0; i < n; i++)
		pkt_free(pkts[i]);
	gro_destroy(gro);
out_pool:
	pkt_pool_destroy(o.pool);
	return err;
}

/* ---- the kernel's GRO ----------------------------------------------------- */

struct kernel_rig {
	int tap_fd;
	int pkt_fd;
	int ifindex;
	uint8_t mac[6];
	uint8_t rx[RX_CAP];
};

static int write_sysfs(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, value, strlen(value));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

static int rig_open(struct kernel_rig *k)
{
	struct ifreq ifr;
	int ctl = -1, err;

	k->tap_fd = k->pkt_fd = -1;
	k->tap_fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (k->tap_fd < 0) {
		err = -errno;
		perror("gro_diff: /dev/net/tun");
		return err;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_NAPI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", TAP_NAME);
	if (ioctl(k->tap_fd, TUNSETIFF, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: TUNSETIFF IFF_NAPI");
		if (err == -EINVAL)
			err = -EOPNOTSUPP;
		goto fail;
	}

	ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ctl < 0) {
		err = -errno;
		goto fail;
	}
	if (ioctl(ctl, SIOCGIFHWADDR, &ifr) < 0 || ioctl(ctl, SIOCGIFINDEX, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: tap hwaddr/index");
		goto fail;
	}
	/* SIOCGIFINDEX overwrote the union: read the address again. */
	k->ifindex = ifr.ifr_ifindex;
	if (ioctl(ctl, SIOCGIFHWADDR, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	memcpy(k->mac, ifr.ifr_hwaddr.sa_data, 6);

	/* An address (198.51.100.1/24) and up: the frames are addressed to
	 * this MAC, so the stack takes them in as a host would. */
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	memset(&ifr.ifr_addr, 0, sizeof(ifr.ifr_addr));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xc6336401); /* 198.51.100.1 */
	if (ioctl(ctl, SIOCSIFADDR, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: SIOCSIFADDR");
		goto fail;
	}
	sin->sin_addr.s_addr = htonl(0xffffff00);
	if (ioctl(ctl, SIOCSIFNETMASK, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	if (ioctl(ctl, SIOCGIFFLAGS, &ifr) < 0) {
		err = -errno;
		goto fail;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(ctl, SIOCSIFFLAGS, &ifr) < 0) {
		err = -errno;
		perror("gro_diff: tap up");
		goto fail;
	}
	close(ctl);
	ctl = -1;

	char path[128], value[32];
	snprintf(path, sizeof(path), "/sys/class/net/%s/gro_flush_timeout", TAP_NAME);
	snprintf(value, sizeof(value), "%llu", FLUSH_TIMEOUT_NS);
	err = write_sysfs(path, value);
	if (err) {
		fprintf(stderr, "gro_diff: %s: %s\n", path, strerror(-err));
		goto fail;
	}

	k->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (k->pkt_fd < 0) {
		err = -errno;
		perror("gro_diff: AF_PACKET");
		goto fail;
	}
	int one = 1, rcvbuf = 64 << 20;
	if (setsockopt(k->pkt_fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) < 0) {
		err = -errno;
		perror("gro_diff: PACKET_VNET_HDR");
		goto fail;
	}
	/* Merged frames are chains of the written skbs: their truesize is
	 * large, the default rcvbuf would drop some. */
	if (setsockopt(k->pkt_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		perror("gro_diff: SO_RCVBUFFORCE (continuing)");
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = k->ifindex };
	if (bind(k->pkt_fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		err = -errno;
		perror("gro_diff: bind AF_PACKET");
		goto fail;
	}
	return 0;

fail:
	if (ctl >= 0)
		close(ctl);
	if (k->pkt_fd >= 0)
		close(k->pkt_fd);
	close(k->tap_fd);
	k->tap_fd = k->pkt_fd = -1;
	return err;
}

static void rig_close(struct kernel_rig *k)
{
	if (k->pkt_fd >= 0)
		close(k->pkt_fd);
	if (k->tap_fd >= 0)
		close(k->tap_fd);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads one frame within `timeout_ms`; 1 got one, 0 timeout, <0 error.
 * Frames the tap sends itself (IPv6 router solicitations...) are skipped. */
static int rig_recv(struct kernel_rig *k, int timeout_ms, struct out_frame *f, bool *ours)
{
	struct pollfd pfd = { .fd = k->pkt_fd, .events = POLLIN };
	int rc = poll(&pfd, 1, timeout_ms);
	if (rc <= 0)
		return rc < 0 ? -errno : 0;
	struct sockaddr_ll from;
	socklen_t from_len = sizeof(from);
	ssize_t n = recvfrom(k->pkt_fd, k->rx, sizeof(k->rx), MSG_TRUNC, (struct sockaddr *)&from,
			     &from_len);
	if (n < 0)
		return -errno;
	*ours = false;
	if ((size_t)n < sizeof(struct virtio_net_hdr) || (size_t)n > sizeof(k->rx) ||
	    from.sll_pkttype == PACKET_OUTGOING)
		return 1;
	struct virtio_net_hdr vh;
	memcpy(&vh, k->rx, sizeof(vh)); /* host order on a little-endian host */
	const uint8_t *frame = k->rx + sizeof(vh);
	size_t len = (size_t)n - sizeof(vh);
	frame_decap(&frame, &len);
	memset(f, 0, sizeof(*f));
	if (!frame_tcp_id(frame, len, &f->src_port, &f->seq, &f->payload))
		return 1;
	f->len = (uint32_t)len;
	f->gso_size = vh.gso_size;
	f->gso_type = vh.gso_type;
	*ours = true;
	return 1;
}

static void rig_drain(struct kernel_rig *k)
{
	struct out_frame f;
	bool mine;
	while (rig_recv(k, 0, &f, &mine) > 0)
		;
}

enum burst_status { BURST_OK, BURST_TICK, BURST_LOST };

/* Writes the case as one burst and collects what the kernel's GRO made of
 * it.  BURST_TICK: a jiffy passed during the burst (retry); BURST_LOST:
 * frames missing after RX_TIMEOUT_MS. */
static enum burst_status run_kernel_once(struct kernel_rig *k, const struct wire *w, struct result *res)
{
	memset(res, 0, sizeof(*res));
	rig_drain(k);

	uint64_t t0 = coarse_ns();
	for (unsigned i = 0; i < w->n; i++) {
		ssize_t n = write(k->tap_fd, w->bytes[i], w->len[i]);
		if (n != (ssize_t)w->len[i]) {
			perror("gro_diff: tap write");
			return BURST_LOST;
		}
	}
	uint64_t t1 = coarse_ns();

	/* All came back when the frames account for every input segment:
	 * a merged frame stands for ceil(payload / gso_size) of them. */
	uint64_t got_segments = 0;
	while (got_segments < w->n) {
		struct out_frame f;
		bool mine;
		int rc = rig_recv(k, RX_TIMEOUT_MS, &f, &mine);
		if (rc <= 0)
			return BURST_LOST;
		if (!mine)
			continue;
		result_add(res, &f);
		got_segments += frame_segments(&f);
	}
	/* Anything more would be a duplicate or a stray: wait a little. */
	struct out_frame extra;
	bool mine;
	while (rig_recv(k, 5, &extra, &mine) > 0)
		if (mine)
			result_add(res, &extra);
	return t0 == t1 ? BURST_OK : BURST_TICK;
}

/* Preflight: does the method work at all?  Four in-order segments must
 * come back as one frame in some clean burst. */
static bool kernel_merges(struct kernel_rig *k, const struct fb_vxlan *vx)
{
	static struct seg_list segs;
	static struct wire wire;
	static struct result res;
	struct case_ctx ctx = { .l = &segs, .family = 4, .dst_mac = k->mac };
	struct stream s;

	memset(&segs, 0, sizeof(segs));
	if (vx)
		seg_list_set_outer(&segs, vx);
	one_stream(&ctx, &s);
	add_run(&segs, &s, 4, MSS);
	if (build_wire(&segs, vx != NULL, &wire) != 0)
		return false;
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
		if (run_kernel_once(k, &wire, &res) == BURST_OK)
			return res.n == 1 && res.f[0].gso_size == MSS;
	return false;
}

/* ---- driver ----------------------------------------------------------- */

struct totals {
	unsigned compared, agreed, mismatched, excused, unstable, skipped, retried;
};

static int run_case(struct kernel_rig *k, const struct gd_case *gc, uint8_t family,
		    const struct fb_vxlan *vx, unsigned repeats, struct totals *t)
{
	static struct seg_list segs;
	static struct wire wire;
	static struct result ours, kern, first;
	char label[64];

	snprintf(label, sizeof(label), "%s_%sv%u", gc->name, vx ? "vxlan_" : "", family);
	memset(&segs, 0, sizeof(segs));
	if (vx)
		seg_list_set_outer(&segs, vx);
	struct case_ctx ctx = { .l = &segs, .family = family, .dst_mac = k->mac };
	gc->build(&ctx);
	if (build_wire(&segs, vx != NULL, &wire) != 0) {
		printf("%-26s SKIP (frame builder refused a segment)\n", label);
		t->skipped++;
		return 0;
	}
	uint32_t seq_base = segs.f[0].seq;
	for (unsigned i = 1; i < segs.n; i++)
		if (segs.f[i].seq < seq_base && segs.f[i].src_port == segs.f[0].src_port)
			seq_base = segs.f[i].seq;
	int err = run_ours(&wire, &ours);
	if (err) {
		printf("%-26s FAIL (our side could not run: %s)\n", label,
		       err == -EINVAL ? "flow_extract refused a frame" : strerror(-err));
		t->mismatched++;
		return 1;
	}
	result_sort(&ours);

	/* The kernel's frames depend on where its NAPI polls fall: on a busy
	 * machine a burst now and then is split across two polls without a
	 * jiffy tick to tell.  Such a round of bursts disagrees with itself;
	 * it is measured again (up to UNSTABLE_ROUNDS), and only a kernel that
	 * stays inconsistent is reported UNSTABLE. */
	unsigned accepted = 0, attempts = 0, ticks = 0, lost = 0, rounds = 0;
	bool stable = false;
	while (!stable && rounds < UNSTABLE_ROUNDS) {
		rounds++;
		stable = true;
		accepted = 0;
		while (accepted < repeats && attempts < MAX_ATTEMPTS * rounds) {
			attempts++;
			enum burst_status st = run_kernel_once(k, &wire, &kern);
			if (st == BURST_TICK) {
				ticks++;
				continue;
			}
			if (st == BURST_LOST) {
				lost++;
				continue;
			}
			result_sort(&kern);
			if (accepted == 0)
				first = kern;
			else if (!result_equal(&first, &kern))
				stable = false;
			accepted++;
		}
		if (accepted == 0)
			break;
	}
	if (rounds > 1)
		t->retried += rounds - 1; /* counted as retried bursts' rounds */
	t->retried += ticks + lost;
	if (accepted == 0) {
		printf("%-26s SKIP (no clean kernel burst in %u attempts: %u crossed a tick, %u lost frames)\n",
		       label, attempts, ticks, lost);
		t->skipped++;
		return 0;
	}
	t->compared++;
	if (!stable) {
		printf("%-26s UNSTABLE (kernel gave different frames on repeated clean bursts)\n", label);
		result_print("kernel", &first, seq_base);
		result_print("kernel", &kern, seq_base);
		t->unstable++;
		return 1;
	}
	bool same = result_equal(&first, &ours);
	const char *verdict = same ? "OK" : "MISMATCH";
	if (!same && gc->compare == CMP_ANY_ORDER) {
		struct result k2 = first, o2 = ours;
		result_sort_seq(&k2);
		result_sort_seq(&o2);
		same = result_equal(&k2, &o2);
		verdict = same ? "OK-ORDER" : "MISMATCH";
	}
	char shape[3 * MAX_OUT + 1];
	result_shape(&ours, shape, sizeof(shape));
	bool ours_as_documented = !gc->ours_expect || strcmp(shape, gc->ours_expect) == 0;
	if (!same && gc->compare == CMP_REPORT)
		verdict = ours_as_documented ? "DIFF-OK" : "MISMATCH";
	printf("%-26s %-8s  %2u segs -> kernel %2u frames, ours %2u frames (%u clean bursts, %u retried)\n",
	       label, verdict, segs.n, first.n, ours.n, accepted, ticks + lost);
	if ((!same || verbose || strcmp(verdict, "OK") != 0) && gc->note)
		printf("    note: %s\n", gc->note);
	if (!same || verbose) {
		result_print("kernel", &first, seq_base);
		result_print("ours", &ours, seq_base);
	}
	if (same) {
		t->agreed++;
		return 0;
	}
	if (gc->compare == CMP_REPORT && ours_as_documented) {
		t->excused++;
		return 0;
	}
	if (!ours_as_documented)
		printf("    ours gives segments per frame %s, its documented rules give %s\n", shape,
		       gc->ours_expect);
	t->mismatched++;
	return 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gro_diff [-r REPEATS] [-c CASE] [-x] [-l] [-v]\n"
		     "  -r N     clean kernel bursts per case that must agree (default 2)\n"
		     "  -c NAME  only cases whose name starts with NAME\n"
		     "  -x       also the VXLAN cases (needs a vxlan device on port 4789 here)\n"
		     "  -l       list the cases\n"
		     "  -v       print the frames of every case, not only mismatches\n");
}

int main(int argc, char **argv)
{
	unsigned repeats = 2;
	const char *only = NULL;
	bool with_vxlan = false;
	int opt;

	while ((opt = getopt(argc, argv, "r:c:xlvh")) != -1) {
		switch (opt) {
		case 'r':
			repeats = (unsigned)strtoul(optarg, NULL, 10);
			if (repeats == 0 || repeats > MAX_ATTEMPTS)
				repeats = 2;
			break;
		case 'c':
			only = optarg;
			break;
		case 'x':
			with_vxlan = true;
			break;
		case 'l':
			for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
				printf("%s%s%s%s\n", cases[i].name, cases[i].families & F4 ? " v4" : "",
				       cases[i].families & F6 ? " v6" : "",
				       cases[i].families & VXO ? " (vxlan only)" :
				       cases[i].families & FVX ? " vxlan" : "");
			return 0;
		case 'v':
			verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	/* One CPU: the tap's NAPI runs where the writes happen. */
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &cpus);
	(void)sched_setaffinity(0, sizeof(cpus), &cpus);

	static struct kernel_rig rig;
	int err = rig_open(&rig);
	if (err == -EOPNOTSUPP)
		return 77;
	if (err)
		return 2;
	if (!kernel_merges(&rig, NULL)) {
		fprintf(stderr, "gro_diff: the kernel did not merge an in-order burst on %s: "
				"IFF_NAPI + gro_flush_timeout does not batch on this kernel\n", TAP_NAME);
		rig_close(&rig);
		return 77;
	}

	struct totals t = { 0 };
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if ((only && strncmp(cases[i].name, only, strlen(only)) != 0) || (cases[i].families & VXO))
			continue;
		if (cases[i].families & F4)
			failed |= run_case(&rig, &cases[i], 4, NULL, repeats, &t);
		if (cases[i].families & F6)
			failed |= run_case(&rig, &cases[i], 6, NULL, repeats, &t);
	}

	/* VXLAN: the kernel's path is udp_gro_receive -> vxlan_gro_receive ->
	 * inner eth/IP/TCP, so the outer headers take part in same_flow and
	 * in the size cap. */
	struct fb_vxlan vx;
	vxlan_outer(&vx, rig.mac);
	if (with_vxlan && !kernel_merges(&rig, &vx)) {
		printf("VXLAN cases SKIPPED: the kernel did not merge an in-order VXLAN burst "
		       "(no vxlan device on UDP port 4789 in this namespace?)\n");
		with_vxlan = false;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (cases[i].families & (FVX | VXO))
				t.skipped += !!(cases[i].families & F4) + !!(cases[i].families & F6);
	}
	for (size_t i = 0; with_vxlan && i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!(cases[i].families & (FVX | VXO)) ||
		    (only && strncmp(cases[i].name, only, strlen(only)) != 0))
			continue;
		if (cases[i].families & F4)
			failed |= run_case(&rig, &cases[i], 4, &vx, repeats, &t);
		if (cases[i].families & F6)
			failed |= run_case(&rig, &cases[i], 6, &vx, repeats, &t);
	}
	rig_close(&rig);

	printf("gro_diff: %u cases compared: %u agree, %u mismatch, %u known differences "
	       "(not failures: kernel version/hash-specific or a documented limit of ours), "
	       "%u unstable; %u skipped; "
	       "%u kernel bursts retried (tick inside the burst or frames lost)\n",
	       t.compared, t.agreed, t.mismatched, t.excused, t.unstable, t.skipped, t.retried);
	if (t.compared == 0)
		return 2;
	return failed ? 1 : 0;
}
