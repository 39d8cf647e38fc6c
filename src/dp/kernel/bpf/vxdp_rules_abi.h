/* Flower rules on the kernel datapath: the contract between the programs
 * (vxdp_rules.h, included by vxdp.bpf.c) and vxswitchd (dp/kernel/kdp_rules.h,
 * control/kdp_rules.c).  Rules as cached decisions, the megaflow idea of
 * Open vSwitch's kernel datapath:
 *
 *   - vxswitchd's classifier (switch/flower_table.h) stays the one source
 *     of rule semantics.  A port with rules (VXDP_PORT_RULES in its
 *     vxdp_port.flags) looks its frames up in map `rflows`: key = the
 *     ingress ifindex and every field of struct flow_key's match part that
 *     the classifier can consult (struct vxdp_rkey, the same values, host
 *     order), value = the generation it was decided under and the action
 *     list (struct vxdp_ract) compiled from the classifier's verdict.
 *   - Hit with value.gen == rgen[0]: the program counts the frame in
 *     rcounts[value.slot] and runs the actions.  Miss, or a stale
 *     generation: the frame goes up whole (perf event `rupcalls`: struct
 *     vxdp_rupcall then skb->len bytes, at most VXDP_RUP_MAX) under the
 *     port's upcall token bucket, and the original skb is dropped.
 *   - The frame is not lost: vxswitchd classifies the copy, installs the
 *     entry (when the program's key equals the key flow_extract() makes of
 *     the bytes, else the flow stays on the slow path: exact either way),
 *     writes the decision into rslots[i] with a sequence number, and sends
 *     the bytes on its re-injection veth (AF_PACKET with skb->mark =
 *     seq << 8 | i).  The far end's ingress program (vxdp_rules_reinject)
 *     takes ifindex and actions from the slot, never from the cache, and
 *     runs them, then the ordinary L2 pipeline as if the frame had come in
 *     on ifindex again.  So every frame is handled by exactly one decision
 *     of the rules current when vxswitchd read it.
 *   - The vxlan ports' ingress: a frame of the collect_md vxlan device
 *     whose VNI is in map `rvnis` (a vxlan port of that VNI has rules)
 *     goes the same way after the VNI and VTEP checks and learning, its
 *     key's tunnel section filled from the tunnel key (the VNI and remote
 *     name the vxlan port; vxswitchd classifies it with in_port that port
 *     and the enc_* fields set, as the userspace datapath would).  The
 *     re-injected frame needs no tunnel metadata: its slot's `vni` is
 *     enough for the L2 switching after the actions (split horizon: to
 *     local ports only).
 *   - Megaflows: an entry's key is the frame's key under its hook's mask
 *     (map `rmasks`, struct vxdp_rmask: the bits some rule of that hook
 *     reads, switch/flower_table.h flower_table_hook_mask, plus the port's
 *     identity), so frames that differ only in bits no rule reads (a new
 *     TCP connection's source port, its flags) share one entry.  The
 *     program masks the key only with a mask of the current generation;
 *     without one it looks the whole key up, which is as right (an entry
 *     for a masked key is right for every key equal to it under its mask,
 *     that key first) and mostly misses.  vxswitchd writes a table's masks
 *     with its generation before it bumps rgen[0].  The upcall carries the
 *     whole key; vxswitchd masks it to install.
 *   - Rule changes: vxswitchd bumps rgen[0] (one map write) before the
 *     command returns; every entry of an older generation is a miss from
 *     then on, and vxswitchd deletes them afterwards.
 *   - Counters: rcounts is a per-CPU array by slot, owned by vxswitchd,
 *     which zeroes a slot before an entry uses it and reads it only after
 *     the entry left the map and a second passed (no program can still be
 *     holding it), then folds it into the rules of the entry: fast + slow
 *     is exact across eviction.
 *   - Bounded: rflows holds at most VXDP_RFLOWS entries (a plain hash:
 *     vxswitchd evicts idle ones; a full map leaves the flow on the slow
 *     path, counted), upcalls pass the port's token bucket (counted when
 *     refused), the perf buffer's losses are counted by vxswitchd.
 *
 * Only fixed-width fields, no holes. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_RULES_ABI_H
#define VXSWITCH_DP_KERNEL_VXDP_RULES_ABI_H

#include <linux/types.h>

enum vxdp_rules_limits {
	VXDP_RACT_MAX = 8,           /* actions of one decision */
	VXDP_RFLOWS = 8192,          /* cache entries = counter slots */
	VXDP_RSLOTS = 256,           /* re-injection decisions in flight */
	VXDP_RUP_MAX = 65000,        /* bytes of a frame an upcall carries */
	VXDP_RMASKS = 1024,          /* hooks with a mask: VM ports' two, each VNI's two */
};

/* vxdp_port.flags: the port has rules (distinct from vxdp_abi.h's bits). */
#define VXDP_PORT_RULES (1u << 8)
/* VXDP_PORT_ERULES (vxdp_abi.h: the switching reads it): egress rules. */

/* Egress rules of a VM port (map `rflows` and the upcall and re-injection
 * as above, on the port's own egress hook, where the kernel runs a
 * device's clsact egress filters: after the switching, an ingress rule's
 * mirred or a flood chose it, for every copy):
 *   - the key is the frame as it leaves, its ifindex that of the port |
 *     VXDP_RKEY_EGRESS, with where it came in, as the userspace datapath
 *     classifies an egress frame with the key of its ingress (`indev`,
 *     enc_*): in_ifindex the device it came in by (skb->ingress_ifindex,
 *     which a redirect keeps), and for the vxlan device's frame the
 *     tunnel section of its received tunnel key (the device's metadata
 *     stays on the skb through the redirect).  Where the skb cannot say,
 *     the program that handles the frame leaves its origin in the per-CPU
 *     map `rorigin`, `via` the device the frame came in by, for the
 *     egress hooks its redirects run (synchronously, on that CPU, before
 *     the program handles another frame), which take it when via is the
 *     frame's ingress_ifindex: vxdp_rules_reinject for a re-injected
 *     frame (in by the re-injection veth; its slot's `origin` says where
 *     it had come in), the vxlan device's ingress rules path for its
 *     frame (a mirror to a tunnel among its actions replaces the
 *     received key with the one it sends by), which the device's ingress
 *     clears for every other frame.
 *     vxswitchd names the port: in_ifindex a VM port's, or the vxlan
 *     device's with (VNI, remote) naming the vxlan port.  Frames of the
 *     taps' slow-path link say only the link, so an `indev` naming a tap
 *     is refused on such rules (control/kdp_ports_rules.c);
 *   - the verdict's actions run there; at their end the frame goes on
 *     out of the device (TC_ACT_OK);
 *   - a re-injected frame of the egress hook (its slot's ifindex has the
 *     bit) runs the slot's actions on the re-injection veth, then goes to
 *     the port by redirect_peer (a veth) or, marked
 *     VXDP_MARK_EGRESS_DONE, by redirect, whose egress hook lets it pass
 *     (clearing the mark).
 * A vxlan port's egress rules: the same on the vxlan device's egress
 * hook (vxdp_tun_egress, attached while a VNI's vxlan port has egress
 * rules, map `rvnis` & VXDP_RVNI_EGRESS), for the frames the programs
 * send there with a tunnel key (switched, flooded, an ingress rule's
 * mirred), each copy with its own: key ifindex = the device's |
 * VXDP_RKEY_EGRESS, tunnel section VNI, remote (as tun_src), TOS, TTL and
 * UDP port, which name the vxlan port as on its ingress, in_ifindex as
 * above.  The tunnel a frame came in by is gone there (the sending key
 * replaced it), so enc_* keys, and an `indev` naming a vxlan port, are
 * refused on a vxlan port's egress rules.  Its re-injected
 * frame ends its slot's actions with VXDP_RA_OUT_TUN to that remote,
 * flagged VXDP_RAF_EGRESS_DONE: marked, the device's hook lets it pass. */
#define VXDP_RKEY_EGRESS (1u << 31)
/* Map `rvnis` value: the hooks at which the VNI's vxlan ports have rules. */
#define VXDP_RVNI_INGRESS 1u
#define VXDP_RVNI_EGRESS 2u
#define VXDP_MARK_EGRESS_DONE 0x76786564u

/* The flow key: struct flow_key's match fields (parse/flow.h), same
 * meaning and byte order, in_port as the ifindex (at an egress hook:
 * in_ifindex).  The tunnel section is zero for a VM port's frame (at its
 * egress: that of the tunnel it came in by, if any); for a frame of the collect_md vxlan device
 * (a vxlan port's ingress, map `rvnis`) it holds what the device's
 * tunnel key says: VNI, remote (tun_src), local address (tun_dst), outer
 * TOS and TTL, and the device's UDP port (vxdp_cfg.dstport), so every
 * enc_* key a rule can match is in the key, and the (VNI, remote) pair
 * names the vxlan port.  The outer UDP source port is not (the helper
 * does not give it, and no rule can match it: there is no enc_src_port). */
struct vxdp_rkey {
	__u32 ifindex;
	__u32 in_ifindex;            /* an egress hook's: where the frame came in (above); 0 at an ingress hook */
	__u32 tun_vni;
	__u8 tun_family, tun_tos, tun_ttl, tun_pad;
	__u16 tun_dst_port, tun_pad2;
	__u8 tun_src[16];            /* network order, IPv4 in the first 4 bytes */
	__u8 tun_dst[16];
	__u8 dl_dst[6];
	__u8 dl_src[6];
	__u16 dl_type;
	__u16 n_vlans;
	__u16 vlan_tci[2];
	__u16 vlan_tpid[2];
	__u8 nw_family, nw_proto, nw_tos, nw_ttl;
	__u8 nw_frag, pad[3];
	__u32 ipv6_label;
	__u8 nw_src[16];
	__u8 nw_dst[16];
	__u8 arp_sha[6];
	__u8 arp_tha[6];
	__u16 tp_src, tp_dst, tcp_flags, pad2;
	/* MPLS (dl_type 0x8847/0x8848): the label stack entries as
	 * flow_extract() keeps them (parse/flow.h: host order, at most 7,
	 * bit i of mpls_used for entry i); zero for any other frame. */
	__u32 mpls_lse[7];
	__u8 mpls_used, mpls_pad[3];
};

/* Map `rmasks` key: the key's ifindex (| VXDP_RKEY_EGRESS) and, for a
 * hook of the vxlan device, the frame's VNI (0 for a VM port's hook, a
 * tunnel section in its key or not). */
struct vxdp_rmask_key {
	__u32 ifindex;
	__u32 vni;
};

/* Map `rmasks` value: the bits of struct vxdp_rkey that decide, for the
 * rules of generation `gen`. */
struct vxdp_rmask {
	__u64 gen;
	struct vxdp_rkey mask;
};

enum vxdp_ract_kind {
	VXDP_RA_END = 0,             /* the list ends: on to L2 switching */
	VXDP_RA_DROP = 1,
	VXDP_RA_OUT_PORT = 2,        /* redirect to ifindex (VETH: redirect_peer), stop */
	VXDP_RA_CLONE_PORT = 3,      /* a copy to ifindex, go on */
	VXDP_RA_OUT_TUN = 4,         /* tunnel key (vni, remote), redirect to the vxlan device, stop */
	VXDP_RA_CLONE_TUN = 5,       /* the same as a copy, go on */
	VXDP_RA_VLAN_PUSH = 6,       /* tpid, tci */
	VXDP_RA_VLAN_POP = 7,
	VXDP_RA_VLAN_MODIFY = 8,     /* tci's VID; PCP too with SET_PRIO */
};

enum vxdp_ract_flags {
	VXDP_RAF_VETH = 1u << 0,     /* = VXDP_FDB_VETH's meaning */
	VXDP_RAF_V6 = 1u << 1,       /* remote is IPv6 */
	VXDP_RAF_SET_PRIO = 1u << 2,
	VXDP_RAF_ERULES = 1u << 3,   /* the target has egress rules: its egress hook counts it */
	VXDP_RAF_EGRESS_DONE = 1u << 4, /* OUT_TUN of a re-injected egress decision: past the device's hook */
};

struct vxdp_ract {
	__u8 kind;
	__u8 flags;
	__u16 tpid;                  /* host order */
	__u16 tci;
	__u16 pad;
	__u32 ifindex;
	__u32 vni;                   /* OUT_TUN, CLONE_TUN: the VNI on the wire (tunnel_key set id, else the port's) */
	__u8 remote[16];             /* network order, IPv4 in the first 4 bytes */
	__u32 hdr_vni;               /* OUT_TUN, CLONE_TUN: the vxlan port's VNI, whose outer headers (TTL, TOS,
				      * checksum, DF, source port: set_key) the frame gets, as the userspace
				      * datapath sends a key's frame with its port's settings */
};

/* Map `rflows` value. */
struct vxdp_rval {
	__u64 gen;
	__u32 slot;                  /* rcounts index */
	__u32 n;
	struct vxdp_ract act[VXDP_RACT_MAX];
};

/* Where a frame came in, for the egress hooks' keys: struct vxdp_rkey's
 * in_ifindex and tunnel section (zero but for the vxlan device's frame),
 * laid out as they are there, so that one copy of
 * VXDP_RORIGIN_SIZE bytes at &rkey.in_ifindex moves the whole section
 * either way (the asserts below hold the two layouts together). */
struct vxdp_rorigin {
	__u32 in_ifindex;
	__u32 tun_vni;
	__u8 tun_family, tun_tos, tun_ttl, tun_pad;
	__u16 tun_dst_port, tun_pad2;
	__u8 tun_src[16];
	__u8 tun_dst[16];
};

#define VXDP_RORIGIN_SIZE sizeof(struct vxdp_rorigin)
#define VXDP_RORIGIN_SAME(f) \
	_Static_assert(__builtin_offsetof(struct vxdp_rkey, f) - __builtin_offsetof(struct vxdp_rkey, in_ifindex) == \
			       __builtin_offsetof(struct vxdp_rorigin, f), \
		       "struct vxdp_rorigin is struct vxdp_rkey's section: " #f)
VXDP_RORIGIN_SAME(in_ifindex);
VXDP_RORIGIN_SAME(tun_vni);
VXDP_RORIGIN_SAME(tun_family);
VXDP_RORIGIN_SAME(tun_tos);
VXDP_RORIGIN_SAME(tun_ttl);
VXDP_RORIGIN_SAME(tun_dst_port);
VXDP_RORIGIN_SAME(tun_src);
VXDP_RORIGIN_SAME(tun_dst);
_Static_assert(__builtin_offsetof(struct vxdp_rkey, tun_dst) + 16 - __builtin_offsetof(struct vxdp_rkey, in_ifindex) ==
		       VXDP_RORIGIN_SIZE,
	       "struct vxdp_rorigin ends where struct vxdp_rkey's tunnel section does");

/* Map `rorigin` value (per CPU): the origin of the frame the program
 * handles now, valid for a frame whose ingress_ifindex is `via` (0: none). */
struct vxdp_rorigin_cpu {
	__u32 via;
	struct vxdp_rorigin o;
};

/* Map `rslots` value: one re-injected frame's decision. */
struct vxdp_rslot {
	__u32 seq;                   /* = skb->mark >> 8 of the frame it is for */
	__u32 ifindex;               /* where the frame came in (| VXDP_RKEY_EGRESS: the port it leaves by) */
	__u32 n;
	__u32 vni;                   /* a vxlan device's frame: its VNI, for L2 switching after */
	struct vxdp_rorigin origin;  /* for the egress hooks the frame meets next */
	struct vxdp_ract act[VXDP_RACT_MAX];
};

/* Map `rcounts` (per CPU, by slot). */
struct vxdp_rcount {
	__u64 packets, bytes;
};

/* Map `rstats` (per CPU, by ifindex): the rules path of one port.  The
 * vxlan device's frames are counted per VNI instead, key
 * VXDP_RSTATS_VNI | vni (the rules path of that VNI's vxlan ports; an
 * ifindex never has the bit). */
#define VXDP_RSTATS_VNI (1u << 31)
struct vxdp_rstats {
	__u64 hits;                  /* cached decision executed */
	__u64 misses;                /* no entry */
	__u64 stale;                 /* entry of an older generation */
	__u64 uncacheable;           /* the key parser gave up: always upcalled */
	__u64 upcalls;               /* frames sent up */
	__u64 upcall_drops;          /* refused by the token bucket or the perf buffer */
	__u64 reinjected;            /* frames back from vxswitchd with their decision */
	__u64 reinject_stale;        /* re-injected frame whose slot was reused: dropped */
	__u64 rule_drops;            /* dropped by a rule (fast path and re-injected) */
	__u64 tx_errors;             /* a redirect/clone/vlan helper failed */
};

/* struct vxdp_rstats's fields in their order, X(field, "what it counts"),
 * for vxswitchd's printers (`stats` text and JSON: kdp_rules_print_port):
 * a counter added to the struct is added here too, one line, and
 * printed under its field's name (kdp_rules.c asserts the two agree in
 * size).  The struct itself stays written out: it is the maps' layout. */
#define VXDP_RSTATS_COUNTERS(X) \
	X(hits, "cached decision executed") \
	X(misses, "no entry") \
	X(stale, "entry of an older generation") \
	X(uncacheable, "the key parser gave up: always upcalled") \
	X(upcalls, "frames sent up") \
	X(upcall_drops, "refused by the token bucket or the perf buffer") \
	X(reinjected, "frames back from vxswitchd with their decision") \
	X(reinject_stale, "re-injected frame whose slot was reused: dropped") \
	X(rule_drops, "dropped by a rule (fast path and re-injected)") \
	X(tx_errors, "a redirect/clone/vlan helper failed")

/* The header of a perf event of `rupcalls`; the frame's bytes follow. */
struct vxdp_rupcall {
	__u32 ifindex;
	__u32 len;                   /* skb->len */
	__u32 cap_len;               /* bytes that follow (min(len, VXDP_RUP_MAX)) */
	__u32 cacheable;             /* key is valid */
	__u16 vlan_present, vlan_tci, vlan_proto, gso_size;
	__u64 gen;                   /* rgen[0] when the program saw it */
	struct vxdp_rkey key;
};

#endif
