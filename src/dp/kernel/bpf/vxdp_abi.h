/* The contract between the kernel datapath's eBPF programs (vxdp.bpf.c)
 * and their loader (kdp.c): the key and value layout of every map, the
 * upcall event, the drop reasons the programs count.
 *
 * Both sides compile this file (clang -target bpf and gcc), so it holds
 * only fixed-width __u8/__u16/__u32/__u64 fields, laid out without holes,
 * and no libbpf.  Changing a struct changes the maps' value sizes: the
 * loader and the programs are always built from one tree together. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_ABI_H
#define VXSWITCH_DP_KERNEL_VXDP_ABI_H

#include <linux/types.h>

enum vxdp_limits {
	VXDP_MAX_PORTS = 1024,
	VXDP_MAX_VNIS = 4096,
	VXDP_FDB_SIZE = 65536,
	/* Head-end replication list of one VNI: local ports + remote VTEPs
	 * (a power of two: the program masks its index).  64: an EVPN fabric
	 * of 60 hosts with 4 VMs of a VNI each; the userspace datapath takes
	 * 64 VTEPs a VNI (VNI_MAX_VTEPS). */
	VXDP_FLOOD_MAX = 64,
	VXDP_HIST_BUCKETS = 6,       /* = PORT_HIST_BUCKETS, same edges */
	VXDP_UPCALL_RING = 256 * 1024,
	/* The program refreshes an FDB entry's last-used time only when it is
	 * older than this: a write per second per MAC, not per frame, so a
	 * stream does not bounce the entry's cache line between CPUs. */
	VXDP_TOUCH_NS = 1000000000ull,
};

/* vxdp_port.flags */
enum vxdp_port_flags {
	VXDP_PORT_VETH = 1u << 0,    /* deliver with bpf_redirect_peer */
	/* The loader made the device (a veth pair of `port add type veth`):
	 * removing the port removes it.  Kept in the map so that a restart
	 * that adopts kept state knows which devices are its own. */
	VXDP_PORT_OURS = 1u << 1,
	/* The port has egress rules (vxdp_rules_abi.h): vxdp_port_egress is
	 * on its device's egress hook, and no frame reaches it by
	 * redirect_peer, which skips that hook.  (Bit 8 is the rules'
	 * VXDP_PORT_RULES.) */
	VXDP_PORT_ERULES = 1u << 9,
};

/* One VM-facing netdev (map `ports`, key: its ifindex). */
struct vxdp_port {
	__u32 vni;
	__u32 flags;
	/* Upcall token bucket: `upcall_rate` per second, at most
	 * `upcall_burst` saved.  tokens/stamp are written by the program,
	 * without a lock: two CPUs may both take the last token, so the
	 * bound is approximate (by at most one per CPU). */
	__u32 upcall_rate;
	__u32 upcall_burst;
	/* Its counters: index in map `counters` (a per-CPU array, so the
	 * program reaches them by the port entry it looked up anyway, not
	 * by a second hash lookup); given by vxswitchd, VXDP_COUNTERS_NOPORT
	 * never. */
	__u32 slot;
	__u32 pad;                   /* zero */
	__u64 tokens_stamp_ns;       /* time the bucket was last filled */
	__u64 tokens;
};

/* FDB (map `fdb`): (vni, mac) -> where it lives. */
struct vxdp_fdb_key {
	__u32 vni;
	__u8 mac[6];
	__u16 pad;                   /* zero */
};

enum vxdp_fdb_flags {
	VXDP_FDB_REMOTE = 1u << 0,   /* behind remote VTEP `remote` */
	VXDP_FDB_V6 = 1u << 1,       /* remote is IPv6 (else IPv4 in remote[0..3]) */
	VXDP_FDB_STATIC = 1u << 2,   /* installed by the operator: never aged */
	VXDP_FDB_VETH = 1u << 3,     /* local port is a veth: redirect_peer */
	VXDP_FDB_EVPN = 1u << 4,     /* a remote MAC from BGP EVPN (control/evpn.h): never aged
	                              * nor flushed, not moved by a remote, moved by a local
	                              * port (mobility); the programs treat it as REMOTE */
};

struct vxdp_fdb_val {
	__u32 ifindex;               /* local port (0 when remote) */
	__u32 flags;
	__u8 remote[16];             /* network byte order */
	__u64 last_used_ns;          /* CLOCK_MONOTONIC (coarse, a tick behind at most) of the last frame to or from it */
};

/* One replication target of a VNI's flood list. */
struct vxdp_flood_ent {
	__u32 ifindex;               /* local port, or 0 for a remote VTEP */
	__u32 flags;                 /* VXDP_FDB_REMOTE / _V6 / _VETH */
	__u8 remote[16];
};

/* A configured VNI (map `vnis`, key: the VNI).  A frame whose VNI has no
 * entry is dropped: that is where VNI isolation is enforced. */
/* vxdp_vni.flags: the VNI's vxlan port's outer-header settings, applied
 * per datagram with the tunnel key (the vxlan device is shared). */
enum vxdp_vni_flags {
	VXDP_VNI_ZERO_CSUM = 1u << 0, /* udpcsum off: BPF_F_ZERO_CSUM_TX (IPv4 only) */
	VXDP_VNI_DF = 1u << 1,        /* df set: BPF_F_DONT_FRAGMENT (IPv4) */
	VXDP_VNI_EVPN = 1u << 2,      /* an EVPN port's: a datagram does not move a local MAC
				       * (switch/vni.h, struct vni's evpn) */
	/* A vxlan port of the VNI has ingress rules: its frames look map
	 * rvnis up (vxdp_rules_abi.h).  Set after rvnis gains the VNI and
	 * cleared before it loses it, so that a frame reads rvnis whenever it
	 * holds the VNI, and the frames of a VNI with none pay no lookup. */
	VXDP_VNI_RULES_IN = 1u << 3,
};

struct vxdp_vni {
	__u8 ttl;                    /* outer TTL (0: 64) */
	__u8 tos;
	__u16 flags;                 /* VXDP_VNI_* */
	__u32 n_flood;               /* entries used in `flood` */
	/* UDP source ports of its datagrams, from the inner flow's hash
	 * (vxdp_sport_hash); kdp_vni_set writes vxdp_cfg's default range here
	 * for a VNI without `srcport` (0, 0: the program reads vxdp_cfg's). */
	__u16 sport_min, sport_max;
	__u32 pad;
	struct vxdp_flood_ent flood[VXDP_FLOOD_MAX];
};

/* Map `vteps`: the remote VTEPs of each VNI (what its flood list names;
 * kdp_vni_set keeps both), each with its counters (per CPU, struct
 * vxdp_vtep_stats of vxdp_diag_abi.h).  A frame from the vxlan device
 * whose (VNI, source) is not in it is dropped: anyone on the underlay
 * could send one. */
struct vxdp_vtep_key {
	__u32 vni;
	__u32 flags;                 /* VXDP_FDB_V6 or 0 */
	__u8 addr[16];
};

/* Map `cfg`, one entry (key 0): the collect_md vxlan devices. */
struct vxdp_cfg {
	__u32 tun4_ifindex;
	__u32 tun6_ifindex;
	__u16 dstport;               /* their UDP port (a rule's enc_dst_port) */
	/* The source ports of a VNI without `srcport`: the namespace's
	 * ip_local_port_range when the loader started, the range the kernel's
	 * own vxlan device takes by default. */
	__u16 sport_min, sport_max;
	__u16 pad;
	/* The device's counters slot (struct vxdp_port.slot); one device
	 * serves both families (tun4_ifindex == tun6_ifindex). */
	__u32 tun_slot;
};

/* UDP source ports on the shared vxlan device.  The kernel picks a
 * datagram's source port itself (udp_flow_src_port(): the skb's hash h,
 * h ^= h << 16, then min + (h * (max - min) >> 32) over the device's
 * range), and bpf_skb_set_tunnel_key() has no field for it.  So the
 * loader makes the device with the widest range it takes, 1-65535
 * (ports 1-65534 come out), and the program chooses the port: it scales
 * the inner flow's hash into the VNI's range (as the userspace datapath
 * does, vxlan_src_port()) and sets the skb's hash to one the kernel maps
 * to exactly that port.  Ports above VXDP_SPORT_TOP cannot come out. */
#define VXDP_SPORT_DEV_MIN 1u
#define VXDP_SPORT_DEV_MAX 65535u
#define VXDP_SPORT_TOP (VXDP_SPORT_DEV_MAX - 1)

/* The port of the range [min, max] that a flow of hash `flow` takes. */
static inline __u32 vxdp_sport_pick(__u32 flow, __u32 min, __u32 max)
{
	__u32 h = flow ^ (flow << 16);
	return min + (__u32)(((__u64)h * (max - min + 1)) >> 32);
}

/* An skb hash with which the device's udp_flow_src_port() gives `port`
 * (VXDP_SPORT_DEV_MIN..VXDP_SPORT_TOP); never 0, which the kernel would
 * replace by a hash of its own. */
static inline __u32 vxdp_sport_hash(__u32 port)
{
	__u64 span = VXDP_SPORT_DEV_MAX - VXDP_SPORT_DEV_MIN;
	/* The least h' with (h' * span) >> 32 == port - min. */
	__u64 want = (((__u64)(port - VXDP_SPORT_DEV_MIN) << 32) + span - 1) / span;
	__u32 w = want ? (__u32)want : 1;
	/* h' = h ^ (h << 16): h keeps h''s low half, its high half is
	 * h''s high half xor the low one. */
	__u32 lo = w & 0xffff;
	return (((w >> 16) ^ lo) << 16) | lo;
}

#define VXDP_DROP_REASONS(X)                                   \
	X(TRUNCATED_ETH, "truncated_eth")                      \
	X(TRUNCATED_VLAN, "truncated_vlan")                    \
	X(VLAN_TOO_MANY_TAGS, "vlan_too_many_tags")            \
	X(INVALID_SRC_MAC, "invalid_src_mac")                  \
	X(PORT_NOT_IN_VNI, "port_not_in_vni")                  \
	X(VXLAN_UNKNOWN_VNI, "vxlan_unknown_vni")              \
	X(LOOP_TO_INGRESS, "loop_to_ingress")                  \
	X(SPLIT_HORIZON, "split_horizon")                      \
	X(NO_TUNNEL_DEV, "no_tunnel_dev")                      \
	X(NO_TUNNEL_KEY, "no_tunnel_key")                      \
	X(TX_ERROR, "tx_error")                                \
	X(FLOOD_DONE, "flood_original")                        \
	X(VXLAN_UNKNOWN_REMOTE, "vxlan_unknown_remote")

enum vxdp_drop {
#define VXDP_DROP_ENUM(n, s) VXDP_DROP_##n,
	VXDP_DROP_REASONS(VXDP_DROP_ENUM)
#undef VXDP_DROP_ENUM
	VXDP_DROP_COUNT
};

/* Per-CPU counters of one port (map `counters`, key: ifindex; the vxlan
 * devices have theirs too).  rx = frames the port's device handed to the
 * program; tx = frames the program delivered to the port (for a VM port:
 * what the VM receives; hist_* by size, skb->len, so a GSO frame counts
 * whole). */
struct vxdp_counters {
	__u64 rx_packets, rx_bytes;
	__u64 tx_packets, tx_bytes;
	__u64 flood_packets;         /* frames this port's ingress replicated */
	__u64 upcalls, upcall_drops; /* learn events sent / refused by the token bucket or a full ring */
	__u64 upcall_drops_rate;     /* of upcall_drops: the port's token bucket was empty */
	__u64 upcall_drops_ring;     /* of upcall_drops: the ring had no room (vxswitchd behind) */
	__u64 evpn_local_kept;       /* the vxlan device's: datagrams of an EVPN VNI whose source MAC
				      * is on a local port, not learned (only zebra moves it away) */
	__u64 drops[VXDP_DROP_COUNT];
	__u64 hist_frames[VXDP_HIST_BUCKETS];
	__u64 hist_bytes[VXDP_HIST_BUCKETS];
};

/* (upcalls and upcall_drops are named as dp/dpif.h's
 * DPIF_UPCALL_COUNTERS, which vxswitchd's printers are made from: a
 * counter of that kind is added there too, with the same name.) */

/* Slot of the counters of frames from a device the program has no port
 * for; the ports' slots are 1 .. VXDP_COUNTER_SLOTS - 1. */
#define VXDP_COUNTERS_NOPORT 0u
#define VXDP_COUNTER_SLOTS (VXDP_MAX_PORTS + 3)

enum vxdp_upcall_kind {
	VXDP_UPCALL_LEARN_LOCAL = 1, /* mac seen on local port `ifindex` */
	VXDP_UPCALL_LEARN_REMOTE = 2,/* mac seen behind remote VTEP `remote` */
};

/* One event on the ring `upcalls`. */
struct vxdp_upcall {
	__u32 kind;
	__u32 vni;
	__u32 ifindex;               /* ingress device */
	__u32 flags;                 /* VXDP_FDB_V6 for a v6 remote */
	__u8 mac[6];
	__u16 vlan;                  /* outer VLAN tag of the frame, 0 if none */
	__u8 remote[16];
};

/* Test-only (rodata `vxdp_record` set by the unit test): the program's
 * last decision, map `decision` key 0, since BPF_PROG_TEST_RUN does not
 * perform a redirect. */
enum vxdp_verdict_kind {
	VXDP_V_NONE = 0,
	VXDP_V_LOCAL = 1,            /* redirect to a local port */
	VXDP_V_REMOTE = 2,           /* tunnel key set, redirect to a vxlan dev */
	VXDP_V_FLOOD = 3,            /* replicated n_clones times */
	VXDP_V_DROP = 4,
};

struct vxdp_decision {
	__u32 kind;
	__u32 ifindex;               /* redirect target */
	__u32 peer;                  /* 1: bpf_redirect_peer */
	__u32 n_clones;
	__u32 drop;                  /* enum vxdp_drop when kind == DROP */
	__u32 tun_vni;               /* tunnel key set (REMOTE) */
	__u8 tun_remote[16];
	__u32 tun_v6;
	__u32 clone_ifindex[VXDP_FLOOD_MAX];
};

/* Test-only input of vxdp_tun_ingress under test_run, which gives the
 * skb no tunnel metadata (map `test_tunkey` key 0). */
struct vxdp_test_tunkey {
	__u32 vni;
	__u32 v6;
	__u8 remote[16];
	__u8 local[16];              /* the outer destination (enc_dst_ip) */
	__u8 tos, ttl;               /* outer TOS and TTL */
	__u16 pad;
};

#endif
