/* The kernel datapath's programs (loader and contract: kdp.h; maps:
 * vxdp_abi.h).
 *
 * vxdp_port_ingress runs on tc/tcx ingress of every VM-facing netdev (the
 * host end of a container's veth, a tap QEMU holds): it learns the source
 * MAC (an upcall to vxswitchd when it is new or moved), then sends the
 * frame to a local port, to a remote VTEP through the collect_md vxlan
 * device with the tunnel key set, or floods it over the VNI's list.
 * vxdp_tun_ingress runs on ingress of the collect_md vxlan devices: the
 * VNI must be configured (VNI isolation is enforced here, not only by
 * what the maps hold) and the sender one of its VTEPs, the remote source
 * MAC is learned, the vxlan port's ingress rules run (when its VNI is in
 * map rvnis, which the VNI's entry flags: vxdp_rules.h), then the frame goes
 * to a local port of that VNI or is flooded to its local ports only
 * (split horizon: never from a remote back to remotes).
 *
 * The kernel's vxlan device does the encapsulation, its GSO and the
 * tunnel GRO: the frames stay big end to end, and nothing here touches
 * payload. */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "vxdp_abi.h"
#include "vxdp_diag_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Set only by the unit test before load: record each decision in map
 * `decision` (BPF_PROG_TEST_RUN does not perform redirects), and take the
 * tunnel key from `test_tunkey` when the skb has none. */
const volatile __u32 vxdp_record = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct vxdp_port);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_FDB_SIZE);
	__type(key, struct vxdp_fdb_key);
	__type(value, struct vxdp_fdb_val);
} fdb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, VXDP_MAX_VNIS);
	__type(key, __u32);
	__type(value, struct vxdp_vni);
} vnis SEC(".maps");

/* A VTEP's entry is its membership of the VNI and its counters at once:
 * one lookup per frame from it, where a set and a counters map took two. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VXDP_MAX_VNIS * 4);
	__type(key, struct vxdp_vtep_key);
	__type(value, struct vxdp_vtep_stats);
} vteps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_cfg);
} cfg SEC(".maps");

/* Indexed by struct vxdp_port.slot (VXDP_COUNTERS_NOPORT: no port). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VXDP_COUNTER_SLOTS);
	__type(key, __u32);
	__type(value, struct vxdp_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, VXDP_UPCALL_RING);
} upcalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_decision);
} decision SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vxdp_test_tunkey);
} test_tunkey SEC(".maps");

/* The time a last-used or last-seen stamp records, read per frame.  The
 * coarse clock (CLOCK_MONOTONIC as of the last tick) is a load; the full
 * one reads the clocksource, which in a guest is the paravirtual clock:
 * profiled under iperf3, two such reads per frame were 0.3 % of the
 * machine's CPU.  The stamps only feed ageing and "last heard" ages in
 * seconds, and vxswitchd subtracts them from its CLOCK_MONOTONIC, which
 * is never behind the coarse clock: an age is at most one tick long. */
static __always_inline __u64 stamp_now(void)
{
	return bpf_ktime_get_coarse_ns();
}

#include "vxdp_capture.h"
#include "vxdp_diag.h"

#define ETH_P_8021Q_BE bpf_htons(ETH_P_8021Q)
#define ETH_P_8021AD_BE bpf_htons(ETH_P_8021AD)

/* What the parse keeps: the two MACs (copied: a clone or a tunnel key
 * helper may move skb->data) and the outer VLAN. */
struct frame {
	__u8 dst[6];
	__u8 src[6];
	__u16 vlan;
};

/* The counters of port p (NULL: of frames from no port).  An array
 * lookup, which the verifier inlines: the hot paths pass the port entry
 * they looked up anyway; ctrs() below is for those that have none. */
static __always_inline struct vxdp_counters *port_ctrs(const struct vxdp_port *p)
{
	__u32 slot = p ? p->slot : VXDP_COUNTERS_NOPORT;
	return bpf_map_lookup_elem(&counters, &slot);
}

static __always_inline struct vxdp_counters *ctrs(__u32 ifindex)
{
	return port_ctrs(bpf_map_lookup_elem(&ports, &ifindex));
}

/* The vxlan device's counters, through cfg (an array) instead of its
 * ports entry; `ifindex` is where the frame is, for a program attached
 * to some other device. */
static __always_inline struct vxdp_counters *tun_ctrs(__u32 ifindex)
{
	__u32 zero = 0;
	struct vxdp_cfg *cf = bpf_map_lookup_elem(&cfg, &zero);
	if (!cf || (ifindex != cf->tun4_ifindex && ifindex != cf->tun6_ifindex))
		return ctrs(ifindex);
	__u32 slot = cf->tun_slot;
	return bpf_map_lookup_elem(&counters, &slot);
}

static __always_inline struct vxdp_decision *rec(void)
{
	__u32 zero = 0;
	return vxdp_record ? bpf_map_lookup_elem(&decision, &zero) : 0;
}

static __always_inline int drop(struct vxdp_counters *c, enum vxdp_drop why)
{
	if (c && why < VXDP_DROP_COUNT)
		c->drops[why]++;
	struct vxdp_decision *d = rec();
	if (d) {
		d->kind = VXDP_V_DROP;
		d->drop = why;
	}
	return TC_ACT_SHOT;
}

static __always_inline void count_tx_to(struct vxdp_counters *c, __u32 len)
{
	if (!c)
		return;
	c->tx_packets++;
	c->tx_bytes += len;
	/* Bucket edges of port_hist_bounds (port/port.c). */
	__u32 b = len < 1536 ? 0 : len < 8192 ? 1 : len < 16384 ? 2 : len < 32768 ? 3 : len < 65536 ? 4 : 5;
	c->hist_frames[b]++;
	c->hist_bytes[b] += len;
}

static __always_inline void count_tx(__u32 ifindex, __u32 len)
{
	count_tx_to(ctrs(ifindex), len);
}

static __always_inline bool mac_is_mcast(const __u8 *m)
{
	return m[0] & 1;
}

static __always_inline bool mac_is_zero(const __u8 *m)
{
	return !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
}

/* Ethernet plus at most one VLAN tag (in the frame or in skb metadata);
 * returns 0 or the drop reason + 1. */
static __always_inline int parse(struct __sk_buff *skb, struct frame *f)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > end) {
		if (skb->len < sizeof(*eth) || bpf_skb_pull_data(skb, sizeof(*eth)) < 0)
			return VXDP_DROP_TRUNCATED_ETH + 1;
		data = (void *)(long)skb->data;
		end = (void *)(long)skb->data_end;
		eth = data;
		if ((void *)(eth + 1) > end)
			return VXDP_DROP_TRUNCATED_ETH + 1;
	}
	__builtin_memcpy(f->dst, eth->h_dest, 6);
	__builtin_memcpy(f->src, eth->h_source, 6);
	f->vlan = skb->vlan_present ? (__u16)skb->vlan_tci : 0;
	__u16 proto = eth->h_proto;
	if (proto != ETH_P_8021Q_BE && proto != ETH_P_8021AD_BE)
		return 0;
	if (skb->vlan_present)
		return VXDP_DROP_VLAN_TOO_MANY_TAGS + 1;
	__u16 *tag = (void *)(eth + 1);
	if ((void *)(tag + 2) > end)
		return VXDP_DROP_TRUNCATED_VLAN + 1;
	if (tag[1] == ETH_P_8021Q_BE || tag[1] == ETH_P_8021AD_BE)
		return VXDP_DROP_VLAN_TOO_MANY_TAGS + 1;
	f->vlan = bpf_ntohs(tag[0]);
	return 0;
}

/* The port's upcall token bucket: true if one may be sent now. */
static __always_inline bool upcall_token(struct vxdp_port *p)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 rate = p->upcall_rate;
	if (rate) {
		__u64 add = (now - p->tokens_stamp_ns) * rate / 1000000000ull;
		if (add) {
			__u64 t = p->tokens + add;
			p->tokens = t > p->upcall_burst ? p->upcall_burst : t;
			p->tokens_stamp_ns = now;
		}
	}
	if (!p->tokens)
		return false;
	p->tokens--;
	return true;
}

static __always_inline void upcall(struct vxdp_port *p, struct vxdp_counters *c, __u32 kind,
				   __u32 vni, __u32 ifindex, const struct frame *f,
				   const __u32 *remote, __u32 flags)
{
	if (!p || !upcall_token(p)) {
		if (c) {
			c->upcall_drops++;
			c->upcall_drops_rate++;
		}
		return;
	}
	struct vxdp_upcall *u = bpf_ringbuf_reserve(&upcalls, sizeof(*u), 0);
	if (!u) {
		if (c) {
			c->upcall_drops++;
			c->upcall_drops_ring++;
		}
		return;
	}
	u->kind = kind;
	u->vni = vni;
	u->ifindex = ifindex;
	u->flags = flags;
	__builtin_memcpy(u->mac, f->src, 6);
	u->vlan = f->vlan;
	__u32 *r = (__u32 *)u->remote;
	r[0] = remote ? remote[0] : 0;
	r[1] = remote ? remote[1] : 0;
	r[2] = remote ? remote[2] : 0;
	r[3] = remote ? remote[3] : 0;
	bpf_ringbuf_submit(u, 0);
	if (c)
		c->upcalls++;
}

static __always_inline void touch(struct vxdp_fdb_val *e)
{
	__u64 now = stamp_now();
	if (now - e->last_used_ns > VXDP_TOUCH_NS)
		e->last_used_ns = now;
}

static __always_inline __u32 tun_dev(__u32 flags)
{
	__u32 zero = 0;
	struct vxdp_cfg *cf = bpf_map_lookup_elem(&cfg, &zero);
	if (!cf)
		return 0;
	return (flags & VXDP_FDB_V6) ? cf->tun6_ifindex : cf->tun4_ifindex;
}

/* Makes the vxlan device send from the port of the VNI's range that the
 * inner flow `flow` (the skb's hash before any of ours) takes
 * (vxdp_abi.h, vxdp_sport_hash). */
static __always_inline void set_src_port(struct __sk_buff *skb, const struct vxdp_vni *v, __u32 flow)
{
	__u32 min = v ? v->sport_min : 0, max = v ? v->sport_max : 0;
	if (!min) {
		__u32 zero = 0;
		struct vxdp_cfg *cf = bpf_map_lookup_elem(&cfg, &zero);
		if (!cf || !cf->sport_min)
			return;
		min = cf->sport_min;
		max = cf->sport_max;
	}
	if (max < min || max > VXDP_SPORT_TOP)
		return;
	bpf_set_hash(skb, vxdp_sport_hash(vxdp_sport_pick(flow, min, max)));
}

/* Sets the tunnel key for a remote VTEP, and the source port for the
 * inner flow `flow`; 0 or a negative errno. */
static __always_inline long set_key(struct __sk_buff *skb, __u32 vni, const struct vxdp_vni *v,
				    const __u8 *remote, __u32 flags, __u32 flow)
{
	set_src_port(skb, v, flow);
	struct bpf_tunnel_key k = {};
	const __u32 *r = (const __u32 *)remote;
	k.tunnel_id = vni;
	k.tunnel_ttl = v && v->ttl ? v->ttl : 64;
	k.tunnel_tos = v ? v->tos : 0;
	__u64 hf = 0;
	if (v && (v->flags & VXDP_VNI_ZERO_CSUM))
		hf |= BPF_F_ZERO_CSUM_TX;
	if (v && (v->flags & VXDP_VNI_DF))
		hf |= BPF_F_DONT_FRAGMENT;
	if (flags & VXDP_FDB_V6) {
		k.remote_ipv6[0] = r[0];
		k.remote_ipv6[1] = r[1];
		k.remote_ipv6[2] = r[2];
		k.remote_ipv6[3] = r[3];
		hf = BPF_F_TUNINFO_IPV6;
	} else {
		k.remote_ipv4 = bpf_ntohl(r[0]);
	}
	return bpf_skb_set_tunnel_key(skb, &k, sizeof(k), hf);
}

/* Delivers to a local port: into the VM's namespace directly for a veth. */
static __always_inline int deliver_local(struct __sk_buff *skb, __u32 ifindex, __u32 flags)
{
	bool peer = flags & VXDP_FDB_VETH;
	/* A port with egress rules: through its egress hook, which counts. */
	struct vxdp_port *out = bpf_map_lookup_elem(&ports, &ifindex);
	if (out && (out->flags & VXDP_PORT_ERULES))
		peer = false;
	else
		count_tx_to(port_ctrs(out), skb->len);
	VXDP_CAPTURE(skb, ifindex, 0, VXDP_CAP_OUT, 0, 0);
	struct vxdp_decision *d = rec();
	if (d) {
		d->kind = VXDP_V_LOCAL;
		d->ifindex = ifindex;
		d->peer = peer;
	}
	return peer ? bpf_redirect_peer(ifindex, 0) : bpf_redirect(ifindex, 0);
}

static __always_inline int deliver_remote(struct __sk_buff *skb, struct vxdp_counters *c, __u32 vni,
					  const struct vxdp_vni *v, const __u8 *remote, __u32 flags)
{
	__u32 dev = tun_dev(flags);
	if (!dev)
		return drop(c, VXDP_DROP_NO_TUNNEL_DEV);
	if (set_key(skb, vni, v, remote, flags, bpf_get_hash_recalc(skb)) < 0)
		return drop(c, VXDP_DROP_TX_ERROR);
	count_tx_to(tun_ctrs(dev), skb->len);
	VXDP_CAPTURE(skb, dev, vni, VXDP_CAP_OUT, (const __u32 *)remote, flags & VXDP_FDB_V6);
	vxdp_vtep_count_tx(vni, flags, (const __u32 *)remote, skb->len);
	struct vxdp_decision *d = rec();
	if (d) {
		d->kind = VXDP_V_REMOTE;
		d->ifindex = dev;
		d->tun_vni = vni;
		d->tun_v6 = !!(flags & VXDP_FDB_V6);
		__builtin_memcpy(d->tun_remote, remote, 16);
	}
	return bpf_redirect(dev, 0);
}

struct flood_ctx {
	struct __sk_buff *skb;
	struct vxdp_counters *c;
	struct vxdp_vni *v;
	struct vxdp_decision *d;
	__u32 vni;
	__u32 in_ifindex;
	__u32 from_remote;
	__u32 sent;
	__u32 flow;                  /* the inner flow's hash, before set_key's */
};

/* One target of the flood list; a bpf_loop callback, so the verifier
 * walks it once instead of once per possible list length. */
static long flood_one(__u32 i, void *arg)
{
	struct flood_ctx *x = arg;
	struct vxdp_vni *v = x->v;
	if (i >= VXDP_FLOOD_MAX || i >= v->n_flood)
		return 1;
	/* clang compares a copy of i and indexes with the other: the
	 * barrier keeps the mask, which bounds the register the verifier
	 * sees indexing (VXDP_FLOOD_MAX is a power of two). */
	__u32 idx = i;
	asm volatile("" : "+r"(idx));
	struct vxdp_flood_ent *e = &v->flood[idx & (VXDP_FLOOD_MAX - 1)];
	__u32 target;
	if (e->flags & VXDP_FDB_REMOTE) {
		if (x->from_remote)
			return 0;
		target = tun_dev(e->flags);
		if (!target || set_key(x->skb, x->vni, v, e->remote, e->flags, x->flow) < 0)
			goto err;
	} else {
		target = e->ifindex;
		if (target == x->in_ifindex)
			return 0;
	}
	if (bpf_clone_redirect(x->skb, target, 0) < 0)
		goto err;
	struct vxdp_port *out = (e->flags & VXDP_FDB_REMOTE) ? 0 : bpf_map_lookup_elem(&ports, &target);
	if (e->flags & VXDP_FDB_REMOTE)
		count_tx_to(tun_ctrs(target), x->skb->len);
	else if (!out || !(out->flags & VXDP_PORT_ERULES)) /* else its egress hook counts */
		count_tx_to(port_ctrs(out), x->skb->len);
	if (e->flags & VXDP_FDB_REMOTE) {
		VXDP_CAPTURE(x->skb, target, x->vni, VXDP_CAP_OUT, (const __u32 *)e->remote, e->flags & VXDP_FDB_V6);
		vxdp_vtep_count_tx(x->vni, e->flags, (const __u32 *)e->remote, x->skb->len);
	} else
		VXDP_CAPTURE(x->skb, target, 0, VXDP_CAP_OUT, 0, 0);
	__u32 n = x->sent;
	if (x->d && n < VXDP_FLOOD_MAX)
		x->d->clone_ifindex[n] = target;
	x->sent = n + 1;
	return 0;
err:
	if (x->c)
		x->c->drops[VXDP_DROP_TX_ERROR]++;
	return 0;
}

/* Head-end replication over the VNI's list, then the original is
 * dropped.  Never back out of `in_ifindex`; `from_remote`: local ports
 * only (split horizon). */
static __always_inline int flood(struct __sk_buff *skb, struct vxdp_counters *c, __u32 vni,
				 struct vxdp_vni *v, __u32 in_ifindex, bool from_remote)
{
	struct flood_ctx x = {
		.skb = skb, .c = c, .v = v, .d = rec(), .vni = vni,
		.in_ifindex = in_ifindex, .from_remote = from_remote,
		.flow = from_remote ? 0 : bpf_get_hash_recalc(skb),
	};
	if (c)
		c->flood_packets++;
	bpf_loop(VXDP_FLOOD_MAX, flood_one, &x, 0);
	if (x.d) {
		x.d->kind = VXDP_V_FLOOD;
		x.d->n_clones = x.sent;
	}
	return TC_ACT_SHOT;
}

/* Whether ifindex is one of the collect_md vxlan devices. */
static __always_inline bool is_tun(__u32 ifindex)
{
	__u32 zero = 0;
	struct vxdp_cfg *cf = bpf_map_lookup_elem(&cfg, &zero);
	return cf && ifindex && (cf->tun4_ifindex == ifindex || cf->tun6_ifindex == ifindex);
}

#include "vxdp_rules.h"

/* A frame of port `ifindex`: its rules (unless `reinjected`: vxswitchd
 * decided them already, vxdp_rules_reinject ran the actions), then
 * learning and L2 switching. */
static __always_inline int port_pipeline(struct __sk_buff *skb, __u32 ifindex, bool reinjected)
{
	struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
	struct vxdp_counters *c = port_ctrs(p);
	if (c && !reinjected) {
		c->rx_packets++;
		c->rx_bytes += skb->len;
	}
	VXDP_CAPTURE(skb, ifindex, 0, VXDP_CAP_IN, 0, 0);
	if (!p)
		return drop(c, VXDP_DROP_PORT_NOT_IN_VNI);
	if (!reinjected && (p->flags & VXDP_PORT_RULES)) {
		int r = rules_ingress(skb, p, ifindex);
		if (r != VXDP_RULES_CONTINUE)
			return r;
	}
	__u32 vni = p->vni;
	struct vxdp_vni *v = bpf_map_lookup_elem(&vnis, &vni);
	if (!v)
		return drop(c, VXDP_DROP_PORT_NOT_IN_VNI);
	struct frame f;
	int bad = parse(skb, &f);
	if (bad)
		return drop(c, bad - 1);
	if (mac_is_mcast(f.src) || mac_is_zero(f.src))
		return drop(c, VXDP_DROP_INVALID_SRC_MAC);

	struct vxdp_fdb_key k = { .vni = vni };
	__builtin_memcpy(k.mac, f.src, 6);
	struct vxdp_fdb_val *e = bpf_map_lookup_elem(&fdb, &k);
	if (e && !(e->flags & VXDP_FDB_REMOTE) && e->ifindex == ifindex)
		touch(e);
	else
		upcall(p, c, VXDP_UPCALL_LEARN_LOCAL, vni, ifindex, &f, 0, 0);

	if (mac_is_mcast(f.dst))
		return flood(skb, c, vni, v, ifindex, false);
	__builtin_memcpy(k.mac, f.dst, 6);
	e = bpf_map_lookup_elem(&fdb, &k);
	if (!e)
		return flood(skb, c, vni, v, ifindex, false);
	if (e->flags & VXDP_FDB_REMOTE) {
		__u8 remote[16];
		__builtin_memcpy(remote, e->remote, 16);
		return deliver_remote(skb, c, vni, v, remote, e->flags);
	}
	if (e->ifindex == ifindex)
		return drop(c, VXDP_DROP_LOOP_TO_INGRESS);
	return deliver_local(skb, e->ifindex, e->flags);
}

SEC("tc")
int vxdp_port_ingress(struct __sk_buff *skb)
{
	return port_pipeline(skb, skb->ifindex, false);
}

/* The tunnel key of a frame the vxlan device decapsulated; remote in
 * network byte order. */
static __always_inline int tun_key(struct __sk_buff *skb, __u32 *vni, __u32 *remote, __u32 *flags)
{
	struct bpf_tunnel_key k = {};
	long err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k), 0);
	if (err == 0) {
		*vni = k.tunnel_id;
		remote[0] = bpf_htonl(k.remote_ipv4);
		remote[1] = remote[2] = remote[3] = 0;
		*flags = 0;
		return 0;
	}
	err = bpf_skb_get_tunnel_key(skb, &k, sizeof(k), BPF_F_TUNINFO_IPV6);
	if (err == 0) {
		*vni = k.tunnel_id;
		remote[0] = k.remote_ipv6[0];
		remote[1] = k.remote_ipv6[1];
		remote[2] = k.remote_ipv6[2];
		remote[3] = k.remote_ipv6[3];
		*flags = VXDP_FDB_V6;
		return 0;
	}
	__u32 zero = 0;
	struct vxdp_test_tunkey *t = vxdp_record ? bpf_map_lookup_elem(&test_tunkey, &zero) : 0;
	if (!t)
		return -1;
	*vni = t->vni;
	__builtin_memcpy(remote, t->remote, 16);
	*flags = t->v6 ? VXDP_FDB_V6 : 0;
	return 0;
}

/* L2 switching of a frame from a remote VTEP in `vni`: to a local port,
 * or flooded to the local ports only (split horizon). */
static __always_inline int tun_l2(struct __sk_buff *skb, struct vxdp_counters *c, __u32 vni, struct vxdp_vni *v,
				  __u32 ifindex, const __u8 *dst)
{
	if (mac_is_mcast(dst))
		return flood(skb, c, vni, v, ifindex, true);
	struct vxdp_fdb_key k = { .vni = vni };
	__builtin_memcpy(k.mac, dst, 6);
	struct vxdp_fdb_val *e = bpf_map_lookup_elem(&fdb, &k);
	if (!e)
		return flood(skb, c, vni, v, ifindex, true);
	if (e->flags & VXDP_FDB_REMOTE)
		return drop(c, VXDP_DROP_SPLIT_HORIZON);
	return deliver_local(skb, e->ifindex, e->flags);
}

SEC("tc")
int vxdp_tun_ingress(struct __sk_buff *skb)
{
	__u32 ifindex = skb->ifindex;
	struct vxdp_counters *c = tun_ctrs(ifindex);
	if (c) {
		c->rx_packets++;
		c->rx_bytes += skb->len;
	}
	/* Its received tunnel key is what egress rules read, unless its
	 * ingress rules path says otherwise (rorigin_tun): what an earlier
	 * frame's path left there is not this frame's.  Read before it is
	 * written, so that a device with no ingress rules writes nothing. */
	struct vxdp_rorigin_cpu *o = rorigin_now();
	if (o && o->via)
		o->via = 0;
	__u32 vni, flags, remote[4];
	if (tun_key(skb, &vni, remote, &flags) < 0)
		return drop(c, VXDP_DROP_NO_TUNNEL_KEY);
	struct vxdp_vni *v = bpf_map_lookup_elem(&vnis, &vni);
	if (!v)
		return drop(c, VXDP_DROP_VXLAN_UNKNOWN_VNI);
	struct vxdp_vtep_stats *vs = vxdp_vtep(vni, flags, remote);
	if (!vs)
		return drop(c, VXDP_DROP_VXLAN_UNKNOWN_REMOTE);
	VXDP_CAPTURE(skb, ifindex, vni, VXDP_CAP_IN, remote, flags & VXDP_FDB_V6);
	vxdp_vtep_count_rx(vs, skb->len);
	struct frame f;
	int bad = parse(skb, &f);
	if (bad)
		return drop(c, bad - 1);
	if (mac_is_mcast(f.src) || mac_is_zero(f.src))
		return drop(c, VXDP_DROP_INVALID_SRC_MAC);

	struct vxdp_fdb_key k = { .vni = vni };
	__builtin_memcpy(k.mac, f.src, 6);
	struct vxdp_fdb_val *e = bpf_map_lookup_elem(&fdb, &k);
	const __u32 *er = e ? (const __u32 *)e->remote : 0;
	if (e && er && (e->flags & VXDP_FDB_REMOTE) && (e->flags & VXDP_FDB_V6) == flags &&
	    er[0] == remote[0] && er[1] == remote[1] && er[2] == remote[2] && er[3] == remote[3]) {
		touch(e);
	} else if (e && !(e->flags & VXDP_FDB_REMOTE) && (v->flags & VXDP_VNI_EVPN)) {
		/* Only zebra moves a local MAC away on an EVPN VNI. */
		if (c)
			c->evpn_local_kept++;
	} else {
		struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
		upcall(p, c, VXDP_UPCALL_LEARN_REMOTE, vni, ifindex, &f, remote, flags);
	}
	/* The vxlan port's ingress rules (where the userspace datapath runs
	 * them: after learning, before switching). */
	__u8 *hooks = (v->flags & VXDP_VNI_RULES_IN) ? bpf_map_lookup_elem(&rvnis, &vni) : 0;
	if (hooks && (*hooks & VXDP_RVNI_INGRESS)) {
		int r = rules_tun(skb, ifindex, vni);
		if (r != VXDP_RULES_CONTINUE)
			return r;
	}
	return tun_l2(skb, c, vni, v, ifindex, f.dst);
}

/* A re-injected frame of a vxlan device, after its actions: L2 switching
 * in the slot's VNI (learning was done when it first came in). */
static __always_inline int reinject_tun_l2(struct __sk_buff *skb, __u32 ifindex, __u32 vni)
{
	struct vxdp_counters *c = tun_ctrs(ifindex);
	struct vxdp_vni *v = bpf_map_lookup_elem(&vnis, &vni);
	if (!v)
		return drop(c, VXDP_DROP_VXLAN_UNKNOWN_VNI);
	struct frame f;
	int bad = parse(skb, &f);
	if (bad)
		return drop(c, bad - 1);
	return tun_l2(skb, c, vni, v, ifindex, f.dst);
}

/* A re-injected frame of a port's egress hook, after its actions: out
 * by that port, past its egress hook (vxdp_rules_abi.h). */
static __always_inline int reinject_egress(struct __sk_buff *skb, __u32 ifindex)
{
	count_tx(ifindex, skb->len);
	struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
	if (p && (p->flags & VXDP_PORT_VETH))
		return bpf_redirect_peer(ifindex, 0);
	skb->mark = VXDP_MARK_EGRESS_DONE;
	return bpf_redirect(ifindex, 0);
}

/* Ingress of vxswitchd's re-injection veth (vxdp_rules_abi.h): a frame
 * that went up, with its decision in rslots[mark & 0xff] (sequence
 * mark >> 8); the slot's actions, then the pipeline of its port (for a
 * vxlan device's frame: L2 switching in the slot's VNI; for a port's
 * egress hook: out by that port). */
SEC("tc")
int vxdp_rules_reinject(struct __sk_buff *skb)
{
	__u32 idx = skb->mark & 0xff, seq = skb->mark >> 8;
	struct vxdp_rslot *sl = bpf_map_lookup_elem(&rslots, &idx);
	if (!sl)
		return TC_ACT_SHOT;
	__u32 ifindex = sl->ifindex & ~VXDP_RKEY_EGRESS, vni = sl->vni;
	bool egress = sl->ifindex & VXDP_RKEY_EGRESS;
	bool tun = is_tun(ifindex);
	struct vxdp_rstats *s = rst(tun ? VXDP_RSTATS_VNI | vni : ifindex);
	if (sl->seq != seq) {
		if (s)
			s->reinject_stale++;
		return TC_ACT_SHOT;
	}
	if (s)
		s->reinjected++;
	struct vxdp_rtrace *t = rtr();
	if (t)
		t->path = 3;
	skb->mark = 0;
	/* Where it came in, for the egress hooks its redirects run next. */
	struct vxdp_rorigin_cpu *o = rorigin_now();
	if (o) {
		o->via = skb->ifindex;
		__builtin_memcpy(&o->o, &sl->origin, sizeof(o->o));
	}
	int r = ract_list(skb, sl, s);
	if (r != VXDP_RULES_CONTINUE)
		return r;
	if (egress && tun)
		return TC_ACT_SHOT; /* its list ends with the OUT_TUN that sends it */
	if (egress)
		return reinject_egress(skb, ifindex);
	if (tun)
		return reinject_tun_l2(skb, ifindex, vni);
	return port_pipeline(skb, ifindex, true);
}

/* Egress of a VM port's device (attached while the port has egress rules,
 * control/kdp_rules.c): its cached decision or an upcall
 * (vxdp_rules_abi.h).  A frame vxswitchd decided already (marked by
 * reinject_egress) and every frame while the port has no egress rules
 * pass. */
/* A frame whose egress rules already ran (a re-injected decision, or one
 * sent past the hook): its mark is cleared and it goes out. */
static __always_inline bool egress_done(struct __sk_buff *skb)
{
	if (skb->mark != VXDP_MARK_EGRESS_DONE)
		return false;
	skb->mark = 0;
	return true;
}

SEC("tc")
int vxdp_port_egress(struct __sk_buff *skb)
{
	if (egress_done(skb))
		return TC_ACT_OK;
	__u32 ifindex = skb->ifindex;
	struct vxdp_port *p = bpf_map_lookup_elem(&ports, &ifindex);
	if (!p || !(p->flags & VXDP_PORT_ERULES))
		return TC_ACT_OK;
	return rules_egress(skb, p, ifindex);
}

/* Egress of the collect_md vxlan device (attached while a vxlan port has
 * egress rules, control/kdp_rules.c): the rules of the vxlan port each
 * frame's tunnel key names (vxdp_rules_abi.h); a re-injected frame
 * vxswitchd decided (marked by its OUT_TUN) and every other frame pass. */
SEC("tc")
int vxdp_tun_egress(struct __sk_buff *skb)
{
	if (egress_done(skb))
		return TC_ACT_OK;
	return rules_tun_egress(skb, skb->ifindex);
}
