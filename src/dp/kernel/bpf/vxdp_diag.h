/* Per remote VTEP counters (contract: vxdp_diag_abi.h), counted where the
 * programs send to a remote and where they accept a frame from one.
 * Included by vxdp.bpf.c after its maps. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_DIAG_H
#define VXSWITCH_DP_KERNEL_VXDP_DIAG_H

#include "vxdp_diag_abi.h"

/* The entry of a remote VTEP of `vni` in map `vteps` (this CPU's
 * counters), or NULL when it is not one of the VNI's.  flags:
 * VXDP_FDB_V6 or 0; remote: 16 bytes, network order.  The programs never
 * add one: an entry is what admits a VTEP's frames (kdp_vni_set). */
static __always_inline struct vxdp_vtep_stats *vxdp_vtep(__u32 vni, __u32 flags, const __u32 *remote)
{
	struct vxdp_vtep_key k = { .vni = vni, .flags = flags & VXDP_FDB_V6 };
	__u32 *a = (__u32 *)k.addr;
	a[0] = remote[0];
	a[1] = remote[1];
	a[2] = remote[2];
	a[3] = remote[3];
	return bpf_map_lookup_elem(&vteps, &k);
}

static __always_inline void vxdp_vtep_count_rx(struct vxdp_vtep_stats *s, __u32 len)
{
	s->rx_packets++;
	s->rx_bytes += len;
	s->last_rx_ns = stamp_now();
}

/* A frame sent to a remote: counted if it is one of the VNI's VTEPs (an
 * FDB entry names no others). */
static __noinline int vxdp_vtep_count_tx(__u32 vni, __u32 flags, const __u32 *remote, __u32 len)
{
	struct vxdp_vtep_stats *s = vxdp_vtep(vni, flags, remote);
	if (!s)
		return 0;
	s->tx_packets++;
	s->tx_bytes += len;
	s->last_tx_ns = stamp_now();
	return 0;
}

#endif
