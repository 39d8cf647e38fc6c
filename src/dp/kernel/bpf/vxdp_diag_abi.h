/* Per remote VTEP counters of the kernel datapath (bpf/vxdp_diag.h):
 * what `stats` shows of a vxlan port and what `diagnose` judges a silent
 * remote by.  They are the values of map `vteps` (per CPU, key struct
 * vxdp_vtep_key of vxdp_abi.h: VNI, family, address), whose entries are
 * the VNIs' remote VTEPs: vxswitchd adds an entry (zeroed) when a VTEP
 * joins a VNI's flood list and deletes it, counters and all, when it
 * leaves.  Both sides compile this file. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_DIAG_ABI_H
#define VXSWITCH_DP_KERNEL_VXDP_DIAG_ABI_H

#include <linux/types.h>

struct vxdp_vtep_stats {
	__u64 rx_packets, rx_bytes;  /* decapsulated frames from it (accepted: a VTEP of the VNI) */
	__u64 tx_packets, tx_bytes;  /* frames sent to it (unicast and flood copies), inner */
	__u64 last_rx_ns, last_tx_ns;/* CLOCK_MONOTONIC, coarse, of the last of each (0: never); per CPU: take the max */
};

#endif
