/* The capture pre-filter (bpf/vxdp_cbpf.h, dp/kernel/kdp_cbpf.h): the
 * loader's check, then the programs' interpreter against libpcap's
 * bpf_filter() on the same frames.
 *
 * - kdp_cbpf_check passes what pcap_compile makes of every filter below,
 *   and refuses, with what is wrong, a jump past the end, a scratch word
 *   read before it is written, a division by a constant 0, a shift by 32,
 *   an opcode libpcap does not know, a last instruction that is not a
 *   return, a filter longer than the programs hold.
 * - Every filter × every frame (IPv4/IPv6 TCP/UDP/ICMP, ARP, VLAN tags,
 *   IPv4 options, a fragment, broadcast, an HTTP request, a frame cut
 *   inside its IP header): a capture of the port with that filter
 *   copies the frame exactly when bpf_filter() keeps it (the reader's
 *   copy arrives), and counts it `filtered` exactly when it does not.
 *   The filters exercise every instruction class pcap_compile emits:
 *   loads of every size and mode, MSH, scratch words, every ALU op, every
 *   jump.
 *
 * The differential part needs root (BPF_PROG_TEST_RUN; skipped else) and
 * runs in a network namespace of its own. */
/* pcap's struct bpf_insn is classic BPF's, linux/bpf.h's (libbpf) is
 * eBPF's: pcap's goes by another name here. */
#define bpf_insn pcap_bpf_insn
#include <pcap/pcap.h>
#undef bpf_insn

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/filter.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_cbpf.h"
#include "frame_builder.h"
#include "kdp_netns.h"
#include "packet/hdr.h"

static bool in_netns;

static const char *const FILTERS[] = {
	"icmp",
	"udp",
	"tcp",
	"ip6",
	"arp",
	"vlan",
	"vlan 10",
	"vlan and ip",
	"vlan 20 and ip6 and tcp",
	"host 192.0.2.1",
	"dst host 192.0.2.2 and not src host 192.0.2.9",
	"src net 192.0.2.0/28",
	"tcp port 2000",
	"udp dst port 53",
	"portrange 1000-1500",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[13] & 2 = 2",
	"greater 200",
	"less 100",
	"len >= 60 and len <= 128",
	"ether src 02:00:00:00:00:01",
	"ether broadcast",
	"ether[12:2] = 0x0800",
	"ip[8] = 64",
	"ip[2:2] > 100",
	"ip[0] & 0xf > 5",
	"ip[6:2] & 0x1fff != 0",
	"icmp6",
	"ip6 host 2001:db8::1",
	"ip6 and tcp dst port 2000",
	"ip and (tcp or udp) and not port 22",
	"udp and udp[8:4] = 0x00010203",
	"tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420",
	"ip[9] * 2 = 12",
	"ip[9] / 3 = 2",
	"ip[9] % 5 = 1",
	"ip[9] ^ 6 = 0",
	"ip[9] - 6 = 0",
	"ip[9] << 1 = 34",
	"ip[9] | 1 = 7",
	"len - 14 > 1000",
	"tcp and (ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) != 0",
	"not ip and not ip6",
};
enum { N_FILTERS = sizeof(FILTERS) / sizeof(FILTERS[0]), MAX_FRAMES = 16 };

static bool compile(const char *expr, struct bpf_program *prog)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	assert_non_null(p);
	int r = pcap_compile(p, prog, expr, 1, PCAP_NETMASK_UNKNOWN);
	if (r < 0)
		fprintf(stderr, "pcap_compile \"%s\": %s\n", expr, pcap_geterr(p));
	pcap_close(p);
	return r == 0;
}

static const struct vxdp_cbpf_insn *insns_of(const struct bpf_program *prog)
{
	return (const struct vxdp_cbpf_insn *)prog->bf_insns;
}

/* ---- the loader's check (no root) ------------------------------------------ */

static void test_check_passes_pcap_output(void **state)
{
	(void)state;
	for (unsigned i = 0; i < N_FILTERS; i++) {
		struct bpf_program prog;
		assert_true(compile(FILTERS[i], &prog));
		char why[64] = "";
		int r = kdp_cbpf_check(insns_of(&prog), prog.bf_len, why, sizeof(why));
		if (r != 0)
			fail_msg("\"%s\" (%u instructions) refused: %s", FILTERS[i], prog.bf_len, why);
		pcap_freecode(&prog);
	}
}

static void refused(const struct vxdp_cbpf_insn *p, size_t n, int err, const char *says)
{
	char why[64] = "";
	assert_int_equal(kdp_cbpf_check(p, n, why, sizeof(why)), err);
	if (!strstr(why, says))
		fail_msg("refusal \"%s\" does not say \"%s\"", why, says);
}

static void test_check_refuses(void **state)
{
	(void)state;
	const struct vxdp_cbpf_insn jump_out[] = {
		{ BPF_JMP | BPF_JEQ | BPF_K, 0, 5, 1 }, { BPF_RET | BPF_K, 0, 0, 1 },
	};
	refused(jump_out, 2, -EINVAL, "instruction 0: a jump past the end");
	const struct vxdp_cbpf_insn ja_out[] = { { BPF_JMP | BPF_JA, 0, 0, 0xffffffffu }, { BPF_RET | BPF_K, 0, 0, 1 } };
	refused(ja_out, 2, -EINVAL, "a jump past the end");
	/* M[3] written on one branch only, read after the join */
	const struct vxdp_cbpf_insn mem_one_path[] = {
		{ BPF_LD | BPF_W | BPF_LEN, 0, 0, 0 }, { BPF_JMP | BPF_JGT | BPF_K, 0, 1, 100 },
		{ BPF_ST, 0, 0, 3 },                   { BPF_LD | BPF_MEM, 0, 0, 3 },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	refused(mem_one_path, 5, -EINVAL, "instruction 3: scratch word 3 read before written");
	const struct vxdp_cbpf_insn mem_both_paths[] = {
		{ BPF_LD | BPF_W | BPF_LEN, 0, 0, 0 }, { BPF_JMP | BPF_JGT | BPF_K, 0, 2, 100 },
		{ BPF_ST, 0, 0, 3 },                   { BPF_JMP | BPF_JA, 0, 0, 1 },
		{ BPF_STX, 0, 0, 3 },                  { BPF_LDX | BPF_MEM, 0, 0, 3 },
		{ BPF_RET | BPF_A, 0, 0, 0 },
	};
	assert_int_equal(kdp_cbpf_check(mem_both_paths, 7, NULL, 0), 0);
	const struct vxdp_cbpf_insn mem_16[] = { { BPF_ST, 0, 0, 16 }, { BPF_RET | BPF_K, 0, 0, 1 } };
	refused(mem_16, 2, -EINVAL, "scratch word 16");
	const struct vxdp_cbpf_insn div0[] = { { BPF_ALU | BPF_DIV | BPF_K, 0, 0, 0 }, { BPF_RET | BPF_A, 0, 0, 0 } };
	refused(div0, 2, -EINVAL, "division by 0");
	const struct vxdp_cbpf_insn mod0[] = { { BPF_ALU | BPF_MOD | BPF_K, 0, 0, 0 }, { BPF_RET | BPF_A, 0, 0, 0 } };
	refused(mod0, 2, -EINVAL, "division by 0");
	const struct vxdp_cbpf_insn shift32[] = { { BPF_ALU | BPF_LSH | BPF_K, 0, 0, 32 }, { BPF_RET | BPF_A, 0, 0, 0 } };
	refused(shift32, 2, -EINVAL, "a shift by 32");
	const struct vxdp_cbpf_insn opcode[] = { { BPF_LD | BPF_H | BPF_LEN, 0, 0, 0 }, { BPF_RET | BPF_A, 0, 0, 0 } };
	refused(opcode, 2, -EINVAL, "opcode 0x88");
	const struct vxdp_cbpf_insn ret_x[] = { { BPF_RET | BPF_X, 0, 0, 0 } };
	refused(ret_x, 1, -EINVAL, "opcode");
	const struct vxdp_cbpf_insn no_ret[] = { { BPF_LD | BPF_IMM, 0, 0, 1 } };
	refused(no_ret, 1, -EINVAL, "the last is not a return");
	refused(no_ret, 0, -EINVAL, "no instruction");
	static struct vxdp_cbpf_insn longest[VXDP_CAP_FILTER_MAX + 1];
	for (unsigned i = 0; i <= VXDP_CAP_FILTER_MAX; i++)
		longest[i] = (struct vxdp_cbpf_insn){ BPF_RET | BPF_K, 0, 0, 1 };
	assert_int_equal(kdp_cbpf_check(longest, VXDP_CAP_FILTER_MAX, NULL, 0), 0);
	refused(longest, VXDP_CAP_FILTER_MAX + 1, -E2BIG, "257 instructions, over 256");
}

/* ---- the programs' interpreter against bpf_filter() (root) ------------------ */

struct frames {
	unsigned n;
	size_t len[MAX_FRAMES];
	uint8_t buf[MAX_FRAMES][2048];
	const char *what[MAX_FRAMES];
};

static void add(struct frames *fs, const char *what, const struct fb_frame *f)
{
	assert_true(fs->n < MAX_FRAMES);
	fs->len[fs->n] = fb_build(f, fs->buf[fs->n], sizeof(fs->buf[0]), NULL);
	assert_true(fs->len[fs->n] >= 14);
	fs->what[fs->n++] = what;
}

static void make_frames(struct frames *fs)
{
	static const uint8_t opts[8] = { 0x94, 0x04, 0, 0, 1, 1, 1, 0 }; /* router alert, NOPs, EOL */
	static const uint8_t get[] = "GET / HTTP/1.1\r\n";
	struct fb_frame f;
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.tcp_flags = 0x02; /* SYN */
	add(fs, "IPv4 TCP SYN", &f);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.payload_len = 1000;
	add(fs, "IPv4 TCP 1000 bytes", &f);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.dst_port = 80;
	f.payload = get;
	f.payload_len = sizeof(get) - 1;
	add(fs, "IPv4 HTTP GET", &f);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.dst_port = 53;
	f.payload_len = 40;
	add(fs, "IPv4 UDP to 53", &f);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.src_port = 1200;
	f.payload_len = 8;
	f.payload_seed = 0;
	add(fs, "IPv4 UDP from 1200, payload 00 01 02 03..", &f);
	fb_frame_init(&f, 4, IP_PROTO_ICMP);
	f.src_port = 8; /* echo request */
	f.payload_len = 56;
	add(fs, "IPv4 ICMP echo", &f);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.ip_opts = opts;
	f.ip_opts_len = sizeof(opts);
	f.src_ip[3] = 9;
	add(fs, "IPv4 with options, from .9", &f);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.frag_off = 100; /* offset 800 bytes: payload only */
	f.payload_len = 300;
	add(fs, "IPv4 fragment", &f);
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	f.payload_len = 200;
	add(fs, "IPv6 TCP", &f);
	fb_frame_init(&f, 6, 58);
	f.src_port = 128; /* echo request */
	add(fs, "IPv6 ICMPv6 echo", &f);
	fb_frame_init(&f, FB_ARP, 0);
	memset(f.dst_mac, 0xff, 6);
	f.arp_op = 1;
	add(fs, "ARP request, broadcast", &f);
	fb_frame_init(&f, 4, IP_PROTO_UDP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = 0x8100;
	f.vlan_tci[0] = 10;
	add(fs, "VLAN 10 IPv4 UDP", &f);
	fb_frame_init(&f, 6, IP_PROTO_TCP);
	f.n_vlans = 1;
	f.vlan_tpid[0] = 0x8100;
	f.vlan_tci[0] = 20;
	add(fs, "VLAN 20 IPv6 TCP", &f);
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	f.src_port = 22;
	f.pad_to = 60;
	add(fs, "IPv4 TCP from 22, padded to 60", &f);
	/* cut inside the TCP header: a load past its end fails (test_run
	 * builds no skb of an IPv4 frame cut in its IP header) */
	fb_frame_init(&f, 4, IP_PROTO_TCP);
	add(fs, "IPv4 TCP cut at 40 bytes", &f);
	fs->len[fs->n - 1] = 40;
}

struct fx {
	struct kdp *k;
	struct kdp_cap_reader *r;
	uint32_t p1;
	unsigned copies;
	uint8_t last[2048];
	size_t last_len;
};

static void on_copy(void *aux, const struct vxdp_cap_meta *m, const uint8_t *frame)
{
	struct fx *fx = aux;
	fx->copies++;
	fx->last_len = m->caplen < sizeof(fx->last) ? m->caplen : sizeof(fx->last);
	memcpy(fx->last, frame, fx->last_len);
}

/* Frame j of fs into the port program as from p1; test_run's result. */
static int feed(const struct fx *fx, const struct frames *fs, unsigned j)
{
	struct __sk_buff ctx = { .ifindex = fx->p1 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = fs->buf[j], .data_size_in = (uint32_t)fs->len[j],
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	return bpf_prog_test_run_opts(kdp_port_prog_fd(fx->k), &o);
}

static void test_kernel_matches_bpf_filter(void **state)
{
	(void)state;
	if (!in_netns)
		skip();
	struct fx fx = { 0 };
	assert_int_equal(kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "kcbt0" }, &fx.k, NULL, 0), 0);
	fx.p1 = if_nametoindex("kcb1");
	assert_true(fx.p1 != 0);
	assert_int_equal(kdp_port_add(fx.k, fx.p1, &(struct kdp_port_opts){ .vni = 7, .flags = VXDP_PORT_VETH }), 0);
	assert_int_equal(kdp_cap_reader_open(fx.k, 8, on_copy, &fx, &fx.r), 0);
	static struct frames fs;
	make_frames(&fs);
	const struct vxdp_cap_key key = { .ifindex = fx.p1 };
	unsigned kept = 0, skipped = 0;
	for (unsigned i = 0; i < N_FILTERS; i++) {
		struct bpf_program prog;
		assert_true(compile(FILTERS[i], &prog));
		assert_int_equal(kdp_cap_set(fx.k, &key, VXDP_CAP_IN, insns_of(&prog), prog.bf_len), 0);
		for (unsigned j = 0; j < fs.n; j++) {
			struct vxdp_cap_state before, after;
			assert_int_equal(kdp_cap_state(fx.k, &key, &before), 0);
			fx.copies = 0;
			int err = feed(&fx, &fs, j);
			if (err)
				fail_msg("test_run of %s (%zu bytes): %s", fs.what[j], fs.len[j], strerror(-err));
			assert_true(kdp_cap_reader_poll(fx.r, 0) >= 0);
			assert_int_equal(kdp_cap_state(fx.k, &key, &after), 0);
			bool pcap = bpf_filter(prog.bf_insns, fs.buf[j], (u_int)fs.len[j], (u_int)fs.len[j]) != 0;
			bool copied = fx.copies == 1, counted = after.filtered == before.filtered + 1;
			if (copied == counted || copied != pcap)
				fail_msg("\"%s\" on %s: bpf_filter %s, the program %s (filtered %llu -> %llu)", FILTERS[i],
					 fs.what[j], pcap ? "keeps it" : "does not", copied ? "copied it" : "did not",
					 (unsigned long long)before.filtered, (unsigned long long)after.filtered);
			if (copied) {
				assert_int_equal(fx.last_len, fs.len[j]);
				assert_memory_equal(fx.last, fs.buf[j], fs.len[j]);
			}
			kept += copied;
			skipped += counted;
		}
		pcap_freecode(&prog);
	}
	/* the set is not lopsided: each verdict many times */
	assert_true(kept > 100 && skipped > 300);
	/* no pre-filter: every frame copied, none counted */
	struct vxdp_cap_state before, after;
	assert_int_equal(kdp_cap_set(fx.k, &key, VXDP_CAP_IN, NULL, 0), 0);
	assert_int_equal(kdp_cap_state(fx.k, &key, &before), 0);
	assert_int_equal(before.n_insns, 0);
	fx.copies = 0;
	for (unsigned j = 0; j < fs.n; j++)
		assert_int_equal(feed(&fx, &fs, j), 0);
	assert_true(kdp_cap_reader_poll(fx.r, 0) >= 0);
	assert_int_equal(kdp_cap_state(fx.k, &key, &after), 0);
	assert_int_equal(fx.copies, fs.n);
	assert_int_equal(after.filtered, before.filtered);
	/* a filter the check refuses changes nothing */
	const struct vxdp_cbpf_insn bad[] = { { BPF_RET | BPF_X, 0, 0, 0 } };
	assert_int_equal(kdp_cap_set(fx.k, &key, VXDP_CAP_IN, bad, 1), -EINVAL);
	assert_int_equal(kdp_cap_state(fx.k, &key, &after), 0);
	assert_int_equal(after.n_insns, 0);
	uint32_t n_pre;
	uint64_t n_filtered;
	assert_int_equal(kdp_cap_totals(fx.k, &n_pre, &n_filtered), 0);
	assert_int_equal(n_pre, 0);
	assert_int_equal(n_filtered, skipped);
	kdp_cap_reader_close(fx.r);
	kdp_close(fx.k);
}

int main(void)
{
	if (kdp_test_netns("test_vxdp_cbpf", (const char *[]){ "kcb1", NULL }, &in_netns) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_passes_pcap_output),
		cmocka_unit_test(test_check_refuses),
		cmocka_unit_test(test_kernel_matches_bpf_filter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
