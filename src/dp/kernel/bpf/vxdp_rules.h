/* Flower rules as cached decisions, the program side (contract and the
 * re-injection design: vxdp_rules_abi.h).  Included by vxdp.bpf.c after its
 * helpers (ctrs, count_tx, tun_dev, rec), before vxdp_port_ingress, which
 * calls rules_ingress() for a port with VXDP_PORT_RULES ahead of learning
 * and L2 switching (where the userspace datapath runs rules: dp_switch),
 * and vxdp_tun_ingress, which calls rules_tun() for a frame of a VNI in
 * map rvnis after the VNI/VTEP checks and learning, before L2 switching
 * (the key's tunnel section from the tunnel key: rkey_tun()).
 *
 * rkey_parse() computes struct vxdp_rkey with flow_extract()'s values for
 * what it understands: Ethernet, up to two VLAN tags (the first may be in
 * skb metadata), IPv4 (any IHL, fragments), IPv6 without extension
 * headers, TCP, UDP, SCTP ports, ICMP/ICMPv6 type and code, Ethernet/IPv4
 * ARP, MPLS label stacks (up to 7 entries), other ethertypes.  Anything else (IPv6 extension headers, lengths
 * flow_extract() would drop the frame for, more tags) is "uncacheable":
 * every such frame goes up and vxswitchd decides it, exactly and slowly.
 * vxswitchd also compares the key with its own parse of the bytes before
 * it installs an entry, so a disagreement costs speed, never semantics. */
#ifndef VXSWITCH_DP_KERNEL_VXDP_RULES_H
#define VXSWITCH_DP_KERNEL_VXDP_RULES_H

#include "vxdp_rules_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_RFLOWS);
	__type(key, struct vxdp_rkey);
	__type(value, struct vxdp_rval);
} rflows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rgen SEC(".maps");

/* The VNIs one of whose vxlan ports has ingress rules (key: VNI, value
 * unused): their frames from the vxlan device take the rules path. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_MAX_VNIS);
	__type(key, __u32);
	__type(value, __u8);
} rvnis SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VXDP_RFLOWS);
	__type(key, __u32);
	__type(value, struct vxdp_rcount);
} rcounts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, VXDP_RSLOTS);
	__type(key, __u32);
	__type(value, struct vxdp_rslot);
} rslots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VXDP_MAX_PORTS + 1);
	__type(key, __u32);
	__type(value, struct vxdp_rstats);
} rstats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} rupcalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_rupcall);
} rup_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_RMASKS);
	__type(key, struct vxdp_rmask_key);
	__type(value, struct vxdp_rmask);
} rmasks SEC(".maps");

/* The masked key (per CPU, off the stack as rup_scratch). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_rkey);
} rkey_masked SEC(".maps");

/* Where the frame being handled came in, when its skb cannot say
 * (rorigin_now() below; vxdp_rules_abi.h, "Egress rules of a VM port"). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_rorigin_cpu);
} rorigin SEC(".maps");

/* Test-only (vxdp_record): what the actions did, map `rtrace` key 0. */
struct vxdp_rtrace {
	__u32 n;
	__u32 kind[VXDP_RACT_MAX + 1];   /* VXDP_RA_*, 0 for "on to L2" */
	__u32 ifindex[VXDP_RACT_MAX + 1];
	__u32 path;                      /* 1 fast (hit), 2 upcall, 3 re-injected */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_rtrace);
} rtrace SEC(".maps");

/* rules_ingress(): the frame goes on to L2 switching. */
#define VXDP_RULES_CONTINUE (-1)

static __always_inline struct vxdp_rtrace *rtr(void)
{
	__u32 zero = 0;
	return vxdp_record ? bpf_map_lookup_elem(&rtrace, &zero) : 0;
}

static __always_inline void rtr_add(__u32 kind, __u32 ifindex)
{
	struct vxdp_rtrace *t = rtr();
	if (!t)
		return;
	__u32 n = t->n;
	if (n < VXDP_RACT_MAX + 1) {
		t->kind[n] = kind;
		t->ifindex[n] = ifindex;
		t->n = n + 1;
	}
}

static __always_inline struct vxdp_rstats *rst(__u32 ifindex)
{
	struct vxdp_rstats *s = bpf_map_lookup_elem(&rstats, &ifindex);
	if (!s) {
		struct vxdp_rstats z = {};
		bpf_map_update_elem(&rstats, &ifindex, &z, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&rstats, &ifindex);
	}
	return s;
}

static __always_inline bool rk_is_vlan(__u16 t)
{
	return t == 0x8100 || t == 0x88a8 || t == 0x9100;
}

/* L4 of flow_extract(): l4 offset, `end` the IP datagram's end, `more`
 * the MF bit.  0 or -1 (uncacheable). */
static __always_inline int rkey_l4(struct __sk_buff *skb, struct vxdp_rkey *k, __u32 l4, __u32 end, bool more)
{
	__u8 h[20];
	switch (k->nw_proto) {
	case 6:
		if (l4 + 20 > end || bpf_skb_load_bytes(skb, l4, h, 20) < 0)
			return -1;
		if ((__u32)(h[12] >> 4) * 4 < 20 || l4 + (__u32)(h[12] >> 4) * 4 > end)
			return -1;
		k->tp_src = (__u16)(h[0] << 8 | h[1]);
		k->tp_dst = (__u16)(h[2] << 8 | h[3]);
		k->tcp_flags = (__u16)(h[13] | ((h[12] & 1) ? 0x100 : 0));
		return 0;
	case 17: {
		if (l4 + 8 > end || bpf_skb_load_bytes(skb, l4, h, 8) < 0)
			return -1;
		__u32 ulen = (__u32)(h[4] << 8 | h[5]);
		if (ulen < 8 || (!more && ulen > end - l4))
			return -1;
		k->tp_src = (__u16)(h[0] << 8 | h[1]);
		k->tp_dst = (__u16)(h[2] << 8 | h[3]);
		return 0;
	}
	case 132:
		if (l4 + 12 > end)
			return 0; /* flow_extract: ports stay zero */
		if (bpf_skb_load_bytes(skb, l4, h, 4) < 0)
			return -1;
		k->tp_src = (__u16)(h[0] << 8 | h[1]);
		k->tp_dst = (__u16)(h[2] << 8 | h[3]);
		return 0;
	case 1:
	case 58:
		if ((k->nw_proto == 1) != (k->nw_family == 4))
			return 0; /* ICMP over v6 or ICMPv6 over v4: an unknown protocol */
		if (l4 + 4 > end || bpf_skb_load_bytes(skb, l4, h, 4) < 0)
			return -1;
		k->tp_src = h[0];
		k->tp_dst = h[1];
		return 0;
	default:
		return 0;
	}
}

static __always_inline int rkey_ipv4(struct __sk_buff *skb, struct vxdp_rkey *k, __u32 l3)
{
	__u8 ip[20];
	if (bpf_skb_load_bytes(skb, l3, ip, 20) < 0 || (ip[0] >> 4) != 4)
		return -1;
	__u32 ihl = (__u32)(ip[0] & 0xf) * 4;
	__u32 tot = (__u32)(ip[2] << 8 | ip[3]);
	if (ihl < 20 || tot < ihl || tot > skb->len - l3)
		return -1;
	k->nw_family = 4;
	k->nw_tos = ip[1];
	k->nw_ttl = ip[8];
	k->nw_proto = ip[9];
	__builtin_memcpy(k->nw_src, ip + 12, 4);
	__builtin_memcpy(k->nw_dst, ip + 16, 4);
	__u16 frag = (__u16)(ip[6] << 8 | ip[7]);
	bool more = frag & 0x2000;
	if (frag & 0x3fff) {
		k->nw_frag = 1;
		if (frag & 0x1fff) {
			k->nw_frag |= 2;
			return 0;
		}
	}
	return rkey_l4(skb, k, l3 + ihl, l3 + tot, more);
}

static __always_inline int rkey_ipv6(struct __sk_buff *skb, struct vxdp_rkey *k, __u32 l3)
{
	__u8 ip[40];
	if (bpf_skb_load_bytes(skb, l3, ip, 40) < 0 || (ip[0] >> 4) != 6)
		return -1;
	__u32 plen = (__u32)(ip[4] << 8 | ip[5]);
	__u8 nh = ip[6];
	if (plen > skb->len - l3 - 40)
		return -1;
	/* Extension headers (hop-by-hop, routing, fragment, destination
	 * options, AH): flow_extract walks them, this parser does not. */
	if (nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60)
		return -1;
	k->nw_family = 6;
	k->nw_tos = (__u8)((ip[0] & 0xf) << 4 | ip[1] >> 4);
	k->ipv6_label = (__u32)(ip[1] & 0xf) << 16 | (__u32)ip[2] << 8 | ip[3];
	k->nw_ttl = ip[7];
	k->nw_proto = nh;
	__builtin_memcpy(k->nw_src, ip + 8, 16);
	__builtin_memcpy(k->nw_dst, ip + 24, 16);
	return rkey_l4(skb, k, l3 + 40, l3 + 40 + plen, false);
}

static __always_inline int rkey_arp(struct __sk_buff *skb, struct vxdp_rkey *k, __u32 l3)
{
	__u8 a[28];
	if (bpf_skb_load_bytes(skb, l3, a, 8) < 0)
		return -1;
	k->nw_proto = a[7];
	if (!(a[0] == 0 && a[1] == 1 && a[2] == 8 && a[3] == 0 && a[4] == 6 && a[5] == 4))
		return 0;
	if (bpf_skb_load_bytes(skb, l3, a, 28) < 0)
		return -1;
	__builtin_memcpy(k->arp_sha, a + 8, 6);
	__builtin_memcpy(k->nw_src, a + 14, 4);
	__builtin_memcpy(k->arp_tha, a + 18, 6);
	__builtin_memcpy(k->nw_dst, a + 24, 4);
	return 0;
}

/* The key of skb as flow_extract() would make it; 0 or -1 (uncacheable). */
/* The MPLS label stack at l3, as flow_extract's parse_mpls(): entry by
 * entry to the bottom of stack, at most 7; a stack the frame cuts short
 * keeps what was read. */
static __always_inline void rkey_mpls(struct __sk_buff *skb, struct vxdp_rkey *k, __u32 l3)
{
#pragma unroll
	for (int i = 0; i < 7; i++) {
		__u32 lse;
		if (bpf_skb_load_bytes(skb, l3 + 4 * i, &lse, 4) < 0)
			return;
		lse = bpf_ntohl(lse);
		k->mpls_lse[i] = lse;
		k->mpls_used |= (__u8)(1u << i);
		if (lse & 0x100) /* bottom of stack */
			return;
	}
}

static __always_inline int rkey_parse(struct __sk_buff *skb, __u32 ifindex, struct vxdp_rkey *k)
{
	__builtin_memset(k, 0, sizeof(*k));
	k->ifindex = ifindex;
	__u8 eth[14];
	if (bpf_skb_load_bytes(skb, 0, eth, 14) < 0)
		return -1;
	__builtin_memcpy(k->dl_dst, eth, 6);
	__builtin_memcpy(k->dl_src, eth + 6, 6);
	__u16 type = (__u16)(eth[12] << 8 | eth[13]);
	__u32 l3 = 14;
	__u32 n = 0;
	if (skb->vlan_present) {
		k->vlan_tpid[0] = bpf_ntohs((__u16)skb->vlan_proto);
		k->vlan_tci[0] = (__u16)skb->vlan_tci;
		n = 1;
	}
	for (int i = 0; i < 3; i++) {
		if (!rk_is_vlan(type))
			break;
		if (n >= 2)
			return -1;
		__u8 tag[4];
		if (bpf_skb_load_bytes(skb, l3, tag, 4) < 0)
			return -1;
		/* No variable index: clang would OR it into the stack pointer. */
		if (n == 0) {
			k->vlan_tpid[0] = type;
			k->vlan_tci[0] = (__u16)(tag[0] << 8 | tag[1]);
		} else {
			k->vlan_tpid[1] = type;
			k->vlan_tci[1] = (__u16)(tag[0] << 8 | tag[1]);
		}
		n++;
		type = (__u16)(tag[2] << 8 | tag[3]);
		l3 += 4;
	}
	k->n_vlans = (__u16)n;
	switch (type) {
	case 0x0800:
		k->dl_type = type;
		return rkey_ipv4(skb, k, l3);
	case 0x86dd:
		k->dl_type = type;
		return rkey_ipv6(skb, k, l3);
	case 0x0806:
		k->dl_type = type;
		return rkey_arp(skb, k, l3);
	case 0x8847:
	case 0x8848:
		k->dl_type = type;
		rkey_mpls(skb, k, l3);
		return 0;
	default:
		k->dl_type = type < 0x0600 ? 0x05ff : type;
		return 0;
	}
}

/* The outer tag now (metadata or the frame's first), for vlan modify. */
static __always_inline int vlan_outer(struct __sk_buff *skb, __u16 *tpid, __u16 *tci)
{
	if (skb->vlan_present) {
		*tpid = bpf_ntohs((__u16)skb->vlan_proto);
		*tci = (__u16)skb->vlan_tci;
		return 0;
	}
	__u8 h[18];
	if (bpf_skb_load_bytes(skb, 0, h, 18) < 0)
		return -1;
	__u16 t = (__u16)(h[12] << 8 | h[13]);
	if (!rk_is_vlan(t))
		return -1;
	*tpid = t;
	*tci = (__u16)(h[14] << 8 | h[15]);
	return 0;
}

static __always_inline long ract_tun(struct __sk_buff *skb, const struct vxdp_ract *a, __u32 *dev)
{
	__u32 fl = (a->flags & VXDP_RAF_V6) ? VXDP_FDB_V6 : 0;
	*dev = tun_dev(fl);
	if (!*dev)
		return -1;
	/* The vxlan port's outer headers (TTL, TOS, checksum, DF, source
	 * port), as a switched frame of its VNI gets, whatever VNI the key
	 * carries (tunnel_key set id N). */
	__u32 hdr_vni = a->hdr_vni;
	return set_key(skb, a->vni, bpf_map_lookup_elem(&vnis, &hdr_vni), a->remote, fl, bpf_get_hash_recalc(skb));
}

/* One action; returns VXDP_RULES_CONTINUE to go on to the next, else the
 * program's verdict. */
static __always_inline int ract_run(struct __sk_buff *skb, const struct vxdp_ract *a, struct vxdp_rstats *s)
{
	__u32 dev;
	__u16 tpid, tci;
	rtr_add(a->kind, a->ifindex);
	switch (a->kind) {
	case VXDP_RA_DROP:
		if (s)
			s->rule_drops++;
		return TC_ACT_SHOT;
	case VXDP_RA_OUT_PORT:
		if (!(a->flags & VXDP_RAF_ERULES))
			count_tx(a->ifindex, skb->len);
		return (a->flags & VXDP_RAF_VETH) ? bpf_redirect_peer(a->ifindex, 0) : bpf_redirect(a->ifindex, 0);
	case VXDP_RA_CLONE_PORT:
		if (bpf_clone_redirect(skb, a->ifindex, 0) < 0)
			goto err;
		if (!(a->flags & VXDP_RAF_ERULES))
			count_tx(a->ifindex, skb->len);
		return VXDP_RULES_CONTINUE;
	case VXDP_RA_OUT_TUN:
		if (ract_tun(skb, a, &dev) < 0)
			goto err_shot;
		if (a->flags & VXDP_RAF_EGRESS_DONE)
			skb->mark = VXDP_MARK_EGRESS_DONE;
		count_tx(dev, skb->len);
		return bpf_redirect(dev, 0);
	case VXDP_RA_CLONE_TUN:
		if (ract_tun(skb, a, &dev) < 0 || bpf_clone_redirect(skb, dev, 0) < 0)
			goto err;
		count_tx(dev, skb->len);
		return VXDP_RULES_CONTINUE;
	case VXDP_RA_VLAN_PUSH:
		if (bpf_skb_vlan_push(skb, bpf_htons(a->tpid), a->tci) < 0)
			goto err_shot;
		return VXDP_RULES_CONTINUE;
	case VXDP_RA_VLAN_POP:
		if (skb->vlan_present || vlan_outer(skb, &tpid, &tci) == 0)
			if (bpf_skb_vlan_pop(skb) < 0)
				goto err_shot;
		return VXDP_RULES_CONTINUE;
	case VXDP_RA_VLAN_MODIFY:
		if (vlan_outer(skb, &tpid, &tci) < 0)
			return VXDP_RULES_CONTINUE; /* untagged: unchanged, as pkt_vlan_modify */
		tci = (__u16)((tci & ~0x0fff) | (a->tci & 0x0fff));
		if (a->flags & VXDP_RAF_SET_PRIO)
			tci = (__u16)((tci & 0x1fff) | (a->tci & 0xe000));
		if (bpf_skb_vlan_pop(skb) < 0 || bpf_skb_vlan_push(skb, bpf_htons(tpid), tci) < 0)
			goto err_shot;
		return VXDP_RULES_CONTINUE;
	default:
		return VXDP_RULES_CONTINUE;
	}
err:
	if (s)
		s->tx_errors++;
	return VXDP_RULES_CONTINUE;
err_shot:
	if (s)
		s->tx_errors++;
	return TC_ACT_SHOT;
}

/* A decision's actions, as both map values that hold them end: the
 * argument type of vxdp_ract_list(), whose size the verifier checks. */
struct vxdp_ract_list {
	struct vxdp_ract act[VXDP_RACT_MAX];
};

/* The action list l, n of them; VXDP_RULES_CONTINUE at its end.  A global
 * function: the verifier checks it once, on its own, instead of once per
 * path of each caller (the rules' hooks are the programs' largest: with it
 * inlined vxdp_port_ingress took 551k of the verifier's 1M instructions),
 * so actions can grow without the callers' counts growing with them. */
__noinline int vxdp_ract_list(struct __sk_buff *skb, const struct vxdp_ract_list *l, __u32 n,
			      struct vxdp_rstats *s)
{
	if (!skb || !l)
		return TC_ACT_SHOT;
	for (__u32 i = 0; i < VXDP_RACT_MAX; i++) {
		if (i >= n || l->act[i].kind == VXDP_RA_END)
			break;
		int r = ract_run(skb, &l->act[i], s);
		if (r != VXDP_RULES_CONTINUE)
			return r;
	}
	rtr_add(0, 0);
	return VXDP_RULES_CONTINUE;
}

/* The actions of map value v (struct vxdp_rval or vxdp_rslot, both
 * ending in act[VXDP_RACT_MAX]). */
#define ract_list(skb, v, s) vxdp_ract_list(skb, (const struct vxdp_ract_list *)(v)->act, (v)->n, s)
_Static_assert(sizeof(struct vxdp_ract_list) == sizeof(((struct vxdp_rval *)0)->act), "rval's actions");
_Static_assert(sizeof(struct vxdp_ract_list) == sizeof(((struct vxdp_rslot *)0)->act), "rslot's actions");

/* Sends the frame up; the caller drops the original (vxswitchd sends the
 * copy back through the re-injection veth). */
static __always_inline int rules_upcall(struct __sk_buff *skb, struct vxdp_port *p, struct vxdp_rstats *s,
					const struct vxdp_rkey *k, bool cacheable, __u64 gen)
{
	/* In a per-CPU scratch value, not on the stack: with the capture
	 * hook's frame below a flood's bpf_loop callback, the programs'
	 * combined stack must stay under 512 bytes. */
	__u32 zero = 0;
	struct vxdp_rupcall *u = bpf_map_lookup_elem(&rup_scratch, &zero);
	if (!u) {
		if (s)
			s->upcall_drops++;
		return TC_ACT_SHOT;
	}
	u->ifindex = k->ifindex;
	u->len = skb->len;
	u->cap_len = skb->len < VXDP_RUP_MAX ? skb->len : VXDP_RUP_MAX;
	u->cacheable = cacheable;
	u->vlan_present = (__u16)skb->vlan_present;
	u->vlan_tci = (__u16)skb->vlan_tci;
	u->vlan_proto = bpf_ntohs((__u16)skb->vlan_proto);
	u->gso_size = (__u16)skb->gso_size;
	u->gen = gen;
	if (k != &u->key)
		__builtin_memcpy(&u->key, k, sizeof(*k));
	struct vxdp_rtrace *t = rtr();
	if (t)
		t->path = 2;
	if (!upcall_token(p) ||
	    bpf_perf_event_output(skb, &rupcalls, BPF_F_CURRENT_CPU | ((__u64)u->cap_len << 32), u, sizeof(*u)) < 0) {
		if (s)
			s->upcall_drops++;
		return TC_ACT_SHOT;
	}
	if (s)
		s->upcalls++;
	return TC_ACT_SHOT;
}

/* The key k's decision is looked up by: k under its hook's mask when the
 * mask is of generation gen, else k itself (vxdp_rules_abi.h, megaflows). */
static __always_inline const struct vxdp_rkey *rkey_lookup_key(const struct vxdp_rkey *k, __u64 gen, bool tun_hook)
{
	struct vxdp_rmask_key mk = { .ifindex = k->ifindex, .vni = tun_hook ? k->tun_vni : 0 };
	struct vxdp_rmask *m = bpf_map_lookup_elem(&rmasks, &mk);
	if (!m || m->gen != gen)
		return k;
	__u32 zero = 0;
	struct vxdp_rkey *out = bpf_map_lookup_elem(&rkey_masked, &zero);
	if (!out)
		return k;
	const __u32 *a = (const __u32 *)k, *b = (const __u32 *)&m->mask;
	__u32 *o = (__u32 *)out;
	for (int i = 0; i < (int)(sizeof(*k) / 4); i++)
		o[i] = a[i] & b[i];
	return out;
}

/* The cache lookup of key k (in the scratch value u), cacheable or not:
 * the cached decision's actions, or an upcall.  tun_hook: a hook of the
 * vxlan device (masks per VNI), a constant at each call, which keeps the
 * verifier's paths few. */
static __always_inline int rules_decide(struct __sk_buff *skb, struct vxdp_port *p, struct vxdp_rstats *s,
					struct vxdp_rupcall *u, bool cacheable, bool tun_hook)
{
	struct vxdp_rkey *k = &u->key;
	__u32 zero = 0;
	__u64 *g = bpf_map_lookup_elem(&rgen, &zero);
	__u64 gen = g ? *g : 0;
	if (!cacheable) {
		if (s)
			s->uncacheable++;
		return rules_upcall(skb, p, s, k, false, gen);
	}
	struct vxdp_rval *v = bpf_map_lookup_elem(&rflows, rkey_lookup_key(k, gen, tun_hook));
	if (!v || v->gen != gen) {
		if (s) {
			if (v)
				s->stale++;
			else
				s->misses++;
		}
		return rules_upcall(skb, p, s, k, true, gen);
	}
	if (s)
		s->hits++;
	__u32 slot = v->slot;
	struct vxdp_rcount *rc = bpf_map_lookup_elem(&rcounts, &slot);
	if (rc) {
		rc->packets++;
		rc->bytes += skb->len;
	}
	struct vxdp_rtrace *t = rtr();
	if (t)
		t->path = 1;
	return ract_list(skb, v, s);
}

/* The key's tunnel section from the frame's tunnel key (what the vxlan
 * device decapsulated; under test_run, map test_tunkey); -1 if none.
 * `tx`: the key a program set for the device to send with, whose remote
 * the helper returns as the local address (it reads the key's source
 * and destination, and the sender's destination is the remote): the
 * section's tun_src is then the remote VTEP, as for a received frame,
 * and tun_dst zero. */
static __always_inline int rkey_tun(struct __sk_buff *skb, struct vxdp_rkey *k, bool tx)
{
	struct bpf_tunnel_key t = {};
	__u32 a;
	if (bpf_skb_get_tunnel_key(skb, &t, sizeof(t), 0) == 0) {
		k->tun_family = 4;
		a = bpf_htonl(tx ? t.local_ipv4 : t.remote_ipv4);
		__builtin_memcpy(k->tun_src, &a, 4);
		a = tx ? 0 : bpf_htonl(t.local_ipv4);
		__builtin_memcpy(k->tun_dst, &a, 4);
	} else if (bpf_skb_get_tunnel_key(skb, &t, sizeof(t), BPF_F_TUNINFO_IPV6) == 0) {
		k->tun_family = 6;
		__builtin_memcpy(k->tun_src, tx ? t.local_ipv6 : t.remote_ipv6, 16);
		if (!tx)
			__builtin_memcpy(k->tun_dst, t.local_ipv6, 16);
	} else {
		__u32 zero = 0;
		struct vxdp_test_tunkey *tk = vxdp_record ? bpf_map_lookup_elem(&test_tunkey, &zero) : 0;
		if (!tk)
			return -1;
		k->tun_family = tk->v6 ? 6 : 4;
		__builtin_memcpy(k->tun_src, tk->remote, 16);
		if (!tx)
			__builtin_memcpy(k->tun_dst, tk->local, 16);
		t.tunnel_id = tk->vni;
		t.tunnel_tos = tk->tos;
		t.tunnel_ttl = tk->ttl;
	}
	k->tun_vni = t.tunnel_id;
	k->tun_tos = t.tunnel_tos;
	k->tun_ttl = t.tunnel_ttl;
	__u32 zero = 0;
	struct vxdp_cfg *cf = bpf_map_lookup_elem(&cfg, &zero);
	k->tun_dst_port = cf ? cf->dstport : 0;
	return 0;
}

/* rorigin (vxdp_rules_abi.h, "Egress rules of a VM port"): where the frame
 * the program handles came in, when that is not what the egress hooks it
 * reaches can read from the skb.  Written by vxdp_rules_reinject (`via`
 * the re-injection veth) and by the vxlan device's ingress rules path
 * (`via` the device: a mirror to a tunnel in its actions replaces the
 * frame's received tunnel key), cleared by the device's ingress for
 * every other frame; read by the egress hooks its redirects run, on the
 * same CPU before it handles another frame. */
static __always_inline struct vxdp_rorigin_cpu *rorigin_now(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&rorigin, &zero);
}

/* The vxlan device's frame on its ingress rules path: k's tunnel section. */
static __always_inline void rorigin_tun(__u32 ifindex, const struct vxdp_rkey *k)
{
	struct vxdp_rorigin_cpu *o = rorigin_now();
	if (!o)
		return;
	o->via = ifindex;
	__builtin_memcpy(&o->o, &k->in_ifindex, VXDP_RORIGIN_SIZE);
	o->o.in_ifindex = ifindex;
}

/* An egress hook's key: where the frame came in.  rorigin's when its `via`
 * is the frame's ingress_ifindex, else that ifindex; `tun`: the key takes
 * the tunnel section of a frame of the vxlan device (a VM port's hook; the
 * device's own has the sending key there), from its received tunnel key. */
static __always_inline void rkey_origin(struct __sk_buff *skb, struct vxdp_rkey *k, bool tun)
{
	__u32 in = skb->ingress_ifindex;
	struct vxdp_rorigin_cpu *o = rorigin_now();
	if (o && o->via && o->via == in) {
		if (tun)
			__builtin_memcpy(&k->in_ifindex, &o->o, VXDP_RORIGIN_SIZE);
		else
			k->in_ifindex = o->o.in_ifindex;
		return;
	}
	k->in_ifindex = in;
	if (tun && is_tun(in))
		rkey_tun(skb, k, false);
}

/* A frame at port `ifindex`'s ingress or egress hook, with rules there:
 * its cached decision, or an upcall (the key's ifindex | VXDP_RKEY_EGRESS
 * at the egress, with where the frame came in). */
static __always_inline int rules_port(struct __sk_buff *skb, struct vxdp_port *p, __u32 ifindex, bool egress)
{
	__u32 key_ifindex = egress ? ifindex | VXDP_RKEY_EGRESS : ifindex;
	struct vxdp_rstats *s = rst(ifindex);
	__u32 zero = 0;
	/* The key is parsed into the upcall's scratch value (per CPU), not
	 * the stack: the combined stack of the programs' calls is 512 bytes. */
	struct vxdp_rupcall *u = bpf_map_lookup_elem(&rup_scratch, &zero);
	if (!u)
		return TC_ACT_SHOT;
	bool cacheable = rkey_parse(skb, key_ifindex, &u->key) == 0;
	if (egress)
		rkey_origin(skb, &u->key, true);
	return rules_decide(skb, p, s, u, cacheable, false);
}

static __always_inline int rules_ingress(struct __sk_buff *skb, struct vxdp_port *p, __u32 ifindex)
{
	return rules_port(skb, p, ifindex, false);
}

/* A frame leaving by port `ifindex`, which has egress rules: its cached
 * decision (then out of the device, counted as sent) or an upcall. */
static __always_inline int rules_egress(struct __sk_buff *skb, struct vxdp_port *p, __u32 ifindex)
{
	int r = rules_port(skb, p, ifindex, true);
	if (r != VXDP_RULES_CONTINUE)
		return r;
	count_tx(ifindex, skb->len);
	return TC_ACT_OK;
}

/* A frame of the vxlan device `ifindex` whose VNI is in rvnis (after the
 * VNI and VTEP checks and learning): the rules of the vxlan port its
 * (VNI, remote) names, cached or decided by vxswitchd.  The device's
 * port entry's token bucket bounds the upcalls; rstats count per VNI. */
static __always_inline int rules_tun(struct __sk_buff *skb, __u32 ifindex, __u32 vni)
{
	struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
	struct vxdp_rstats *s = rst(VXDP_RSTATS_VNI | vni);
	__u32 zero = 0;
	struct vxdp_rupcall *u = bpf_map_lookup_elem(&rup_scratch, &zero);
	if (!u || !p)
		return TC_ACT_SHOT;
	bool cacheable = rkey_parse(skb, ifindex, &u->key) == 0;
	if (rkey_tun(skb, &u->key, false) < 0)
		return TC_ACT_SHOT;
	rorigin_tun(ifindex, &u->key);
	return rules_decide(skb, p, s, u, cacheable, true);
}

/* A frame the vxlan device `ifindex` is about to encapsulate (its egress
 * hook; the tunnel key set by the program that sent it here): if its VNI
 * has a vxlan port with egress rules (rvnis & VXDP_RVNI_EGRESS), the
 * rules of the vxlan port its (VNI, remote) names, at that port's egress,
 * cached or decided by vxswitchd; else, and at the end of the actions,
 * out (the device encapsulates it).  rstats count per VNI. */
static __always_inline int rules_tun_egress(struct __sk_buff *skb, __u32 ifindex)
{
	__u32 zero = 0;
	struct vxdp_rupcall *u = bpf_map_lookup_elem(&rup_scratch, &zero);
	if (!u)
		return TC_ACT_OK;
	bool cacheable = rkey_parse(skb, ifindex | VXDP_RKEY_EGRESS, &u->key) == 0;
	rkey_origin(skb, &u->key, false);
	if (rkey_tun(skb, &u->key, true) < 0)
		return TC_ACT_OK; /* not sent by the programs: not a port's frame */
	__u32 vni = u->key.tun_vni;
	__u8 *hooks = bpf_map_lookup_elem(&rvnis, &vni);
	struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
	if (!hooks || !(*hooks & VXDP_RVNI_EGRESS) || !p)
		return TC_ACT_OK;
	int r = rules_decide(skb, p, rst(VXDP_RSTATS_VNI | vni), u, cacheable, true);
	return r == VXDP_RULES_CONTINUE ? TC_ACT_OK : r;
}

#endif
