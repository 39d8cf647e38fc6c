/* Capture on the kernel datapath: the contract between the programs'
 * capture hooks (vxdp_capture.h, included by vxdp.bpf.c) and the loader
 * side (dp/kernel/kdp_capture.h).
 *
 * A capture is switched on per (port, direction) in map `cap_ports`; the
 * programs copy each frame of such a port, with this metadata in front,
 * into the perf event array `cap_ring` (bpf_perf_event_output with
 * BPF_F_CTX_LEN_MASK: the kernel copies the skb's bytes, paged parts
 * included).  The global `vxdp_cap_on` (its own data section, so nothing
 * else shares the mapping) is non-zero while any key is in `cap_ports`:
 * with no capture the programs pay that one test.
 *
 * A key may carry a pre-filter: the capture's own BPF filter (classic
 * BPF, pcap_compile's output), run by the program on the frame before it
 * is copied (vxdp_cbpf.h), so a narrow capture of a busy port copies
 * only what it keeps.  The reader filters again: the pre-filter may keep
 * more than the filter (it keeps a frame whenever it cannot decide), it
 * never drops what the filter keeps.
 *
 * Both sides compile this file (clang -target bpf and gcc): fixed-width
 * fields only, no holes. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_CAPTURE_ABI_H
#define VXSWITCH_DP_KERNEL_VXDP_CAPTURE_ABI_H

#include <linux/types.h>

enum vxdp_cap_limits {
	VXDP_CAP_KEYS = 64,
	/* A perf sample's size is a u16 (header, size word and raw data
	 * together): bytes of a frame past this are not copied (caplen < len,
	 * as tcpdump's snaplen does).  Only GSO/GRO frames are this big. */
	VXDP_CAP_SNAPLEN = 65000,
	/* Instructions of a pre-filter (a power of two: the program masks
	 * its program counter with it).  "host A and tcp port P" is 20-30;
	 * a longer filter runs in vxswitchd alone. */
	VXDP_CAP_FILTER_MAX = 256,
	VXDP_CAP_FILTER_MEM = 16,  /* classic BPF's scratch words, M[] */
};

/* = DP_CAPTURE_IN / DP_CAPTURE_OUT (dp/capture_rec.h). */
enum vxdp_cap_dir {
	VXDP_CAP_IN = 1,     /* the port's device handed it to the program / decapsulated */
	VXDP_CAP_OUT = 2,    /* the program delivered it to the port / to a remote VTEP */
};

/* A VM-facing port: (its ifindex, 0).  A vxlan port: (the collect_md
 * device's ifindex, the VNI); the record's remote tells which VTEP. */
struct vxdp_cap_key {
	__u32 ifindex;
	__u32 vni;
};

/* Classic BPF's instruction (= struct sock_filter, pcap's struct bpf_insn). */
struct vxdp_cbpf_insn {
	__u16 code;
	__u8 jt;
	__u8 jf;
	__u32 k;
};

struct vxdp_cap_state {
	__u32 dirs;          /* VXDP_CAP_IN | VXDP_CAP_OUT wanted */
	__u32 n_insns;       /* the pre-filter's length; 0: copy every frame */
	__u64 captured;      /* copies the perf ring took (atomic adds) */
	__u64 dropped;       /* copies refused: the ring of that CPU was full */
	__u64 filtered;      /* frames the pre-filter kept from the ring */
	struct vxdp_cbpf_insn insns[VXDP_CAP_FILTER_MAX];
};

/* In front of the frame's bytes in every sample. */
struct vxdp_cap_meta {
	__u64 ts_ns;         /* bpf_ktime_get_ns() */
	__u32 ifindex;       /* key.ifindex */
	__u32 vni;           /* key.vni */
	__u32 len;           /* skb->len */
	__u32 caplen;        /* bytes that follow */
	__u8 dir;            /* enum vxdp_cap_dir */
	__u8 v6;             /* remote is IPv6 */
	__u16 pad;
	__u32 pad2;
	__u8 remote[16];     /* vxlan: the remote VTEP (network order), else zero */
};

#endif
