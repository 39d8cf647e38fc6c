/* fuzz_vxdp_cbpf: the capture pre-filter (dp/kernel/bpf/vxdp_cbpf.h) as
 * the kernel runs it (BPF_PROG_TEST_RUN on the loaded programs, a capture
 * of port p1 on), against libpcap's bpf_filter() on the same frame.
 *
 * Input: a control byte, then
 *   bit 7 clear: a byte choosing one of FILTERS (pcap_compile's output),
 *                then the frame;
 *   bit 7 set:   bits 0-5 + 1 instructions of 8 bytes (code, jt, jf, k,
 *                host order), then the frame.
 * A program kdp_cbpf_check() refuses is only checked not to be loaded
 * (kdp_cap_set refuses it too, and the key keeps what it had).
 *
 * Checked for every frame the programs ran on:
 *   - the frame reached the capture once: copied (or refused by a full
 *     ring) or counted filtered, never both, never neither;
 *   - the pre-filter never keeps from the ring what bpf_filter() keeps
 *     (the promise of vxdp_capture_abi.h);
 *   - for pcap_compile's programs the two agree both ways (the
 *     interpreter keeps a frame it cannot decide only for opcodes and
 *     operands pcap_compile does not emit).
 *
 * Needs root; without it every input is skipped (said once). */
#define bpf_insn pcap_bpf_insn /* pcap's classic BPF, not linux/bpf.h's */
#include <pcap/pcap.h>
#undef bpf_insn

#include <bpf/bpf.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_capture.h"
#include "dp/kernel/kdp_cbpf.h"
#include "dp/kernel/kdp_link.h"

static const char *const FILTERS[] = {
	"icmp", "tcp port 80", "udp and dst port 53", "vlan 10 and ip", "ip6 and tcp",
	"host 192.0.2.1 and not port 22", "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0", "greater 500",
	"ip[6:2] & 0x1fff != 0", "tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420", "arp or icmp6",
	"ether broadcast or ether multicast", "ip[9] % 5 = 1 or ip[9] / 3 = 2", "len - 14 > 100",
};
enum { N_FILTERS = sizeof(FILTERS) / sizeof(FILTERS[0]) };

static struct bpf_program progs[N_FILTERS];
static struct kdp *k;
static struct vxdp_cap_key key;
static bool ready;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "fuzz_vxdp_cbpf: needs root (a netns and BPF programs): every input is skipped\n");
		return 0;
	}
	if (kdp_link_veth_create("p1", "p1vm", -1, 0) < 0)
		abort();
	char why[256];
	if (kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "vxdpc0" }, &k, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_vxdp_cbpf: %s\n", why);
		abort();
	}
	key.ifindex = if_nametoindex("p1");
	if (kdp_port_add(k, key.ifindex, &(struct kdp_port_opts){ .vni = 1, .flags = VXDP_PORT_VETH }))
		abort();
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	for (unsigned i = 0; i < N_FILTERS; i++)
		if (!p || pcap_compile(p, &progs[i], FILTERS[i], 1, PCAP_NETMASK_UNKNOWN) < 0)
			abort();
	pcap_close(p);
	ready = true;
	return 0;
}

static struct vxdp_cap_state state(void)
{
	struct vxdp_cap_state st;
	if (kdp_cap_state(k, &key, &st) < 0)
		abort();
	return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vxdp_cbpf_insn raw[64];
	if (!ready || size < 2)
		return 0;
	const struct vxdp_cbpf_insn *insns;
	size_t n;
	bool compiled = !(data[0] & 0x80);
	if (compiled) {
		const struct bpf_program *bp = &progs[data[1] % N_FILTERS];
		insns = (const struct vxdp_cbpf_insn *)bp->bf_insns;
		n = bp->bf_len;
		data += 2, size -= 2;
	} else {
		n = (size_t)(data[0] & 0x3f) + 1;
		if (size < 1 + n * 8)
			return 0;
		memcpy(raw, data + 1, n * 8);
		insns = raw;
		data += 1 + n * 8, size -= 1 + n * 8;
	}
	if (size < 14 || size > 3000)
		return 0;
	if (kdp_cbpf_check(insns, n, NULL, 0) < 0) {
		struct vxdp_cap_state had, has;
		int had_err = kdp_cap_state(k, &key, &had);
		if (kdp_cap_set(k, &key, VXDP_CAP_IN, insns, n) != -EINVAL || kdp_cap_state(k, &key, &has) != had_err ||
		    (had_err == 0 && (has.n_insns != had.n_insns || memcmp(has.insns, had.insns, sizeof(has.insns)))))
			abort(); /* refused: nothing changed */
		return 0;
	}
	if (kdp_cap_set(k, &key, VXDP_CAP_IN, insns, n) < 0)
		abort();
	struct vxdp_cap_state before = state();
	struct __sk_buff ctx = { .ifindex = key.ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data, .data_size_in = (uint32_t)size, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx));
	int err = bpf_prog_test_run_opts(kdp_port_prog_fd(k), &o);
	if (err == -EINVAL)
		return 0; /* test_run builds no skb of some short frames: no program ran */
	if (err) {
		fprintf(stderr, "test_run: %s\n", strerror(-err));
		abort();
	}
	struct vxdp_cap_state after = state();
	/* no perf reader: a copy is "dropped" (no ring on that CPU) */
	uint64_t copied = after.captured + after.dropped - before.captured - before.dropped;
	uint64_t filtered = after.filtered - before.filtered;
	if (copied + filtered != 1)
		abort();
	bool pcap = bpf_filter((const struct pcap_bpf_insn *)insns, data, (u_int)size, (u_int)size) != 0;
	if (pcap && filtered)
		abort(); /* kept from the ring what the filter keeps */
	if (compiled && !pcap && copied)
		abort(); /* pcap_compile's program: the two must agree */
	return 0;
}
