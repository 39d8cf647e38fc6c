/* The capture hooks of the kernel datapath's programs (contract:
 * vxdp_capture_abi.h).  Included by vxdp.bpf.c after its maps; the
 * programs call VXDP_CAPTURE() where a frame enters from a port and
 * where it is delivered to one.  With no capture running, the macro is
 * one load and one branch on `vxdp_cap_on`. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_CAPTURE_H
#define VXSWITCH_DP_KERNEL_VXDP_CAPTURE_H

#include "vxdp_capture_abi.h"
#include "vxdp_cbpf.h"

/* Written by vxswitchd (kdp_capture.c) through the section's mmap. */
volatile __u32 vxdp_cap_on SEC(".data.vxcap") = 0;

/* Not preallocated: an element replaced by vxswitchd (another filter) is
 * freed after an RCU grace period, so a program that looked the old one
 * up reads its filter whole, never half of the new one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_CAP_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct vxdp_cap_key);
	__type(value, struct vxdp_cap_state);
} cap_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} cap_ring SEC(".maps");

/* Copies the frame if (ifindex, vni) captures direction `how` & 0xff
 * (bit 8: remote is IPv6; five arguments is a BPF call's most).  remote:
 * 16 bytes (network order) or NULL. */
/* The key and the record header live in a per-CPU scratch value, not on
 * the stack: this function runs below a flood's bpf_loop callback, and
 * the programs' combined stack must stay within 512 bytes. */
struct vxdp_cap_scratch {
	struct vxdp_cap_key k;
	struct vxdp_cap_meta m;
	struct vxdp_cbpf_vm vm;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_cap_scratch);
} cap_scratch SEC(".maps");

static __noinline int vxdp_cap_emit(struct __sk_buff *skb, __u32 ifindex, __u32 vni, __u32 how,
				    const __u32 *remote)
{
	__u32 dir = how & 0xff, zero = 0;
	struct vxdp_cap_scratch *x = bpf_map_lookup_elem(&cap_scratch, &zero);
	if (!x)
		return 0;
	x->k.ifindex = ifindex;
	x->k.vni = vni;
	struct vxdp_cap_state *s = bpf_map_lookup_elem(&cap_ports, &x->k);
	if (!s || !(s->dirs & dir))
		return 0;
	if (s->n_insns && vxdp_cbpf_filter(skb, s, &x->vm) == VXDP_CBPF_SKIP) {
		__sync_fetch_and_add(&s->filtered, 1);
		return 0;
	}
	__u64 len = skb->len;
	__u64 caplen = len < VXDP_CAP_SNAPLEN ? len : VXDP_CAP_SNAPLEN;
	struct vxdp_cap_meta *m = &x->m;
	__builtin_memset(m, 0, sizeof(*m));
	m->ts_ns = bpf_ktime_get_ns();
	m->ifindex = ifindex;
	m->vni = vni;
	m->len = (__u32)len;
	m->caplen = (__u32)caplen;
	m->dir = (__u8)dir;
	m->v6 = how >> 8 ? 1 : 0;
	if (remote) {
		__u32 *r = (__u32 *)m->remote;
		r[0] = remote[0];
		r[1] = remote[1];
		r[2] = remote[2];
		r[3] = remote[3];
	}
	long err = bpf_perf_event_output(skb, &cap_ring, BPF_F_CURRENT_CPU | (caplen << 32), m, sizeof(*m));
	if (err)
		__sync_fetch_and_add(&s->dropped, 1);
	else
		__sync_fetch_and_add(&s->captured, 1);
	return 0;
}

#define VXDP_CAPTURE(skb, ifindex, vni, dir, remote, v6)                          \
	do {                                                                      \
		if (vxdp_cap_on)                                                  \
			vxdp_cap_emit((skb), (ifindex), (vni), (dir) | ((v6) ? 0x100 : 0), (remote)); \
	} while (0)

#endif
