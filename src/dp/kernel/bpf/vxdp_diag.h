/* Per remote VTEP counters (contract: vxdp_diag_abi.h), counted where the
 * programs send to a remote and where they accept a frame from one.
 * Included by vxdp.bpf.c after its maps. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_DIAG_H
#define VXSWITCH_DP_KERNEL_VXDP_DIAG_H

#include "vxdp_diag_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VXDP_MAX_VNIS * 4);
	__type(key, struct vxdp_vtep_key);
	__type(value, struct vxdp_vtep_stats);
} vtep_stats SEC(".maps");

/* flags: VXDP_FDB_V6 or 0; remote: 16 bytes, network order; rx: 1 for a
 * frame from it, 0 for one to it. */
static __noinline int vxdp_vtep_count(__u32 vni, __u32 flags, const __u32 *remote, __u32 len, __u32 rx)
{
	struct vxdp_vtep_key k = { .vni = vni, .flags = flags & VXDP_FDB_V6 };
	__u32 *a = (__u32 *)k.addr;
	a[0] = remote[0];
	a[1] = remote[1];
	a[2] = remote[2];
	a[3] = remote[3];
	struct vxdp_vtep_stats *s = bpf_map_lookup_elem(&vtep_stats, &k);
	if (!s) {
		struct vxdp_vtep_stats zero = {};
		bpf_map_update_elem(&vtep_stats, &k, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&vtep_stats, &k);
		if (!s)
			return 0;
	}
	__u64 now = stamp_now();
	if (rx) {
		s->rx_packets++;
		s->rx_bytes += len;
		s->last_rx_ns = now;
	} else {
		s->tx_packets++;
		s->tx_bytes += len;
		s->last_tx_ns = now;
	}
	return 0;
}

#endif
