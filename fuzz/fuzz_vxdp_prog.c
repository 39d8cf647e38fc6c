/* fuzz_vxdp_prog: frames from a VM and from the underlay, through the
 * kernel datapath's programs as the kernel runs them (BPF_PROG_TEST_RUN
 * on the loaded programs, dp/kernel/bpf/vxdp.bpf.c).
 *
 * Input: one control byte, then the frame (at least 14 bytes: test_run
 * refuses less).
 *   byte 0 bits 0-1: the ingress: 0 vm port p1 (veth), 1 port d3 (plain
 *          netdev), 2 port p4 (VNI 2), 3 the vxlan device;
 *          bits 2-3: the tunnel key's VNI for the vxlan device: 0-3 (0
 *          and 3 are configured nowhere);
 *          bit 4: the remote is the known VTEP (else another address).
 *
 * Set-up once (LLVMFuzzerInitialize): a network namespace of its own,
 * veths p1 p2 d3 p4, the programs loaded with the decision record on,
 * VNI 1 = {p1, p2, d3, remote 198.51.100.2}, VNI 2 = {p4}, static FDB
 * entries for p2 and a remote MAC.  Needs root; without it the target
 * does nothing (and says so once).
 *
 * Checked for every frame:
 *   - the verdict is REDIRECT or SHOT, never anything else;
 *   - REDIRECT: the decision is LOCAL to p2/d3/p1 (the ingress never,
 *     and only ports of the frame's VNI) or REMOTE to the vxlan device
 *     with a VNI of the ingress's (from the vxlan device: never REMOTE,
 *     split horizon);
 *   - SHOT: a flood (clones only to ports of the VNI, never the ingress,
 *     never a remote when it came from one) or a drop with a named
 *     reason;
 *   - the ingress's rx counter grew by one.
 * An input test_run itself refuses (EINVAL: it will not build an skb of
 * some short frames, e.g. 15 bytes of IPv4) is skipped: no program ran. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/pkt_cls.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_link.h"

static struct kdp *k;
static uint32_t p1, p2, d3, p4, tun;
static bool ready;

static uint32_t vni_of(uint32_t ifindex)
{
	return ifindex == p4 ? 2 : 1;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "fuzz_vxdp_prog: needs root (a netns and BPF programs): every input is skipped\n");
		return 0;
	}
	const char *names[] = { "p1", "p2", "d3", "p4" };
	for (int i = 0; i < 4; i++) {
		char peer[16];
		snprintf(peer, sizeof(peer), "%svm", names[i]);
		if (kdp_link_veth_create(names[i], peer, -1, 0) < 0)
			abort();
	}
	p1 = if_nametoindex("p1"), p2 = if_nametoindex("p2"), d3 = if_nametoindex("d3"), p4 = if_nametoindex("p4");
	char why[256];
	if (kdp_open(&(struct kdp_opts){ .record = true, .tun_name = "vxdpf0" }, &k, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_vxdp_prog: %s\n", why);
		abort();
	}
	tun = kdp_tun_ifindex(k);
	struct kdp_port_opts veth = { .vni = 1, .flags = VXDP_PORT_VETH, .upcall_rate = 1000000, .upcall_burst = 1000 };
	struct kdp_port_opts plain = { .vni = 1 }, v2 = { .vni = 2, .flags = VXDP_PORT_VETH };
	if (kdp_port_add(k, p1, &veth) || kdp_port_add(k, p2, &veth) || kdp_port_add(k, d3, &plain) ||
	    kdp_port_add(k, p4, &v2))
		abort();
	struct vxdp_flood_ent fl[4] = {
		{ .ifindex = p1, .flags = VXDP_FDB_VETH }, { .ifindex = p2, .flags = VXDP_FDB_VETH },
		{ .ifindex = d3 }, { .flags = VXDP_FDB_REMOTE },
	};
	inet_pton(AF_INET, "198.51.100.2", fl[3].remote);
	struct vxdp_flood_ent fl2 = { .ifindex = p4, .flags = VXDP_FDB_VETH };
	if (kdp_vni_set(k, 1, NULL, fl, 4) || kdp_vni_set(k, 2, NULL, &fl2, 1))
		abort();
	const uint8_t m2[6] = { 2, 0, 0, 0, 0, 2 }, mr[6] = { 2, 0, 0, 0, 0, 0xa };
	struct vxdp_fdb_val e2 = { .ifindex = p2, .flags = VXDP_FDB_VETH | VXDP_FDB_STATIC };
	struct vxdp_fdb_val er = { .flags = VXDP_FDB_REMOTE | VXDP_FDB_STATIC };
	memcpy(er.remote, fl[3].remote, 4);
	if (kdp_fdb_add(k, 1, m2, &e2) || kdp_fdb_add(k, 1, mr, &er))
		abort();
	ready = true;
	return 0;
}

static void drain(void *aux, const struct vxdp_upcall *u)
{
	(void)aux;
	(void)u;
}

static bool in_vni(uint32_t ifindex, uint32_t vni)
{
	return (ifindex == p1 || ifindex == p2 || ifindex == d3) ? vni == 1 : ifindex == p4 ? vni == 2 : false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready || size < 15 || size > 3000)
		return 0;
	uint8_t ctl = data[0];
	const uint32_t ins[4] = { p1, d3, p4, tun };
	uint32_t in = ins[ctl & 3], tvni = (ctl >> 2) & 3;
	bool from_tun = in == tun;
	if (from_tun) {
		struct vxdp_test_tunkey tk = { .vni = tvni };
		inet_pton(AF_INET, (ctl & 0x10) ? "198.51.100.2" : "198.51.100.9", tk.remote);
		uint32_t zero = 0;
		bpf_map_update_elem(kdp_map_fd(k, "test_tunkey"), &zero, &tk, BPF_ANY);
	}
	uint32_t vni = from_tun ? tvni : vni_of(in);
	struct vxdp_counters before, after;
	if (kdp_counters_read(k, in, &before) < 0)
		abort();
	int dfd = kdp_map_fd(k, "decision");
	uint32_t zero = 0;
	struct vxdp_decision d = { 0 };
	bpf_map_update_elem(dfd, &zero, &d, BPF_ANY);
	struct __sk_buff ctx = { .ifindex = in };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = data + 1, .data_size_in = (uint32_t)(size - 1),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx));
	int err = bpf_prog_test_run_opts(from_tun ? kdp_tun_prog_fd(k) : kdp_port_prog_fd(k), &o);
	if (err == -EINVAL)
		return 0; /* test_run itself refuses some short frames (15 bytes of IPv4: no program run) */
	if (err < 0) {
		fprintf(stderr, "test_run: %s\n", strerror(-err));
		abort();
	}
	bpf_map_lookup_elem(dfd, &zero, &d);
	if (kdp_counters_read(k, in, &after) < 0 || after.rx_packets != before.rx_packets + 1)
		abort();
	if (o.retval == TC_ACT_REDIRECT) {
		if (d.kind == VXDP_V_LOCAL) {
			if (d.ifindex == in || !in_vni(d.ifindex, vni))
				abort();
		} else if (d.kind == VXDP_V_REMOTE) {
			if (from_tun || d.ifindex != tun || d.tun_vni != vni)
				abort();
		} else {
			abort();
		}
	} else if (o.retval == TC_ACT_SHOT) {
		if (d.kind == VXDP_V_DROP) {
			if (d.drop >= VXDP_DROP_COUNT)
				abort();
		} else if (d.kind == VXDP_V_FLOOD) {
			for (uint32_t i = 0; i < d.n_clones && i < VXDP_FLOOD_MAX; i++) {
				uint32_t t = d.clone_ifindex[i];
				if (t == in || (t == tun && from_tun) || (t != tun && !in_vni(t, vni)))
					abort();
			}
		} else {
			abort();
		}
	} else {
		abort();
	}
	/* Learn events pile up in the ring otherwise (it would fill and
	 * count upcall drops: harmless, but not what a frame should see). */
	kdp_upcall_poll(k, 0, drain, NULL);
	return 0;
}
