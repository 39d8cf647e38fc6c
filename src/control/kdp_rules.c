#include "control/kdp_rules.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/kdp_rules_key.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_rules.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"
#include "parse/flow_extract.h"
#include "switch/flower_hook.h"
#include "util/vlog.h"

/* Not in Debian 12's uapi headers (6.1); the kernel has it since 6.2. */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif

enum {
	KR_IDLE_S = 10,             /* an entry without a packet this long is evicted */
	KR_GRACE_NS = 1000000000,   /* after its deletion, before a slot is read the last time */
	KR_FRAME_MAX = VXDP_RUP_MAX + 8,
};

enum kr_state { KR_FREE = 0, KR_LIVE, KR_RETIRED };

/* One cache entry; its index is its counter slot. */
struct kr_ent {
	uint8_t state;
	uint8_t n_rules;
	uint32_t rslot[FLOWER_MAX_HOPS];   /* the verdict's rules: slot and uid */
	uint64_t ruid[FLOWER_MAX_HOPS];
	uint64_t gen;
	struct vxdp_rkey key;
	uint64_t synced_pk, synced_by;     /* folded into the rules so far */
	uint64_t since_ns;                 /* LIVE: last change of synced_pk; RETIRED: deletion */
};

struct kdp_rules_ctl {
	struct kdp *k;
	struct kdp_rules *r;
	kr_port_fn *port;
	kr_ifindex_fn *by_ifindex;
	kr_vtep_fn *by_vtep;
	void *aux;
	uint32_t rvni[VXDP_MAX_VNIS];      /* the VNIs in map rvnis */
	unsigned n_rvni;
	uint32_t rvni_next[VXDP_MAX_VNIS]; /* kdp_rules_changed's: the VNIs the new table needs */
	uint8_t rvni_hooks[VXDP_MAX_VNIS]; /* and at which hooks (VXDP_RVNI_*) */
	const struct flower_table *t;
	uint64_t gen;
	struct kr_masks masks;             /* the hooks' masks (megaflows) */
	struct kr_ent ents[VXDP_RFLOWS];
	uint32_t cursor;                   /* where the next free slot is looked for */
	uint32_t n_live;
	struct flower_counters *fc;        /* per rule: fast (folded) and slow */
	struct pkt_pool *pool;
	struct pkt *pkt;
	uint8_t frame[KR_FRAME_MAX];
	uint64_t last_tick_ns, last_idle_ns;
	/* counted */
	uint64_t upcalls, installed, evicted_idle, evicted_stale, cache_full, key_mismatch, uncacheable,
		malformed, too_big, too_many_actions, reinject_errors, no_port;
};

int kdp_rules_ctl_open(struct kdp *k, kr_port_fn *port, kr_ifindex_fn *by_ifindex, kr_vtep_fn *by_vtep,
		       void *aux, struct kdp_rules_ctl **out, char *why, size_t why_len)
{
	struct kdp_rules_ctl *kr = calloc(1, sizeof(*kr));
	if (!kr)
		return -ENOMEM;
	kr->k = k;
	kr->port = port;
	kr->by_ifindex = by_ifindex;
	kr->by_vtep = by_vtep;
	kr->aux = aux;
	kr->gen = 1;
	int err = -ENOMEM;
	kr->fc = calloc(1, sizeof(*kr->fc));
	kr->pool = pkt_pool_create_sized(1, KR_FRAME_MAX + 256);
	kr->pkt = kr->pool ? pkt_alloc(kr->pool) : NULL;
	if (!kr->fc || !kr->pkt) {
		snprintf(why, why_len, "out of memory for the rules path");
		goto fail;
	}
	if ((err = kdp_rules_open(k, &kr->r, why, (unsigned)why_len)) < 0)
		goto fail;
	/* Kept maps (vxswitchd --keep-datapath) hold a previous run's
	 * decisions under its generations: start past them, so that none
	 * of them is ever taken for one of ours. */
	uint64_t kept;
	if (kdp_rules_gen_get(kr->r, &kept) == 0 && kept >= kr->gen)
		kr->gen = kept + 1;
	kdp_rules_vni_clear(kr->r); /* a kept run's: the table says which VNIs again */
	if ((err = kdp_rules_gen_set(kr->r, kr->gen)) < 0) {
		snprintf(why, why_len, "cannot set the rules generation: %s", strerror(-err));
		goto fail;
	}
	*out = kr;
	return 0;
fail:
	kdp_rules_ctl_close(kr);
	return err;
}

void kdp_rules_ctl_close(struct kdp_rules_ctl *kr)
{
	if (!kr)
		return;
	kdp_rules_close(kr->r);
	if (kr->pkt)
		pkt_free(kr->pkt);
	pkt_pool_destroy(kr->pool);
	if (kr->fc)
		flower_counters_fini(kr->fc);
	free(kr->fc);
	free(kr);
}

int kdp_rules_ctl_fd(const struct kdp_rules_ctl *kr)
{
	return kdp_rules_fd(kr->r);
}

/* ---- counters ------------------------------------------------------------ */

/* Adds to rule (slot, uid): a slot that a newer rule took drops the late
 * counts of its deleted owner. */
static void kr_fold_rule(struct kdp_rules_ctl *kr, uint32_t slot, uint64_t uid, uint64_t pk, uint64_t by,
			 bool fast, uint64_t now)
{
	if (!pk || (slot >= kr->fc->n && flower_counters_reserve(kr->fc, (size_t)slot + 1) < 0))
		return;
	struct flower_rule_counters *c = &kr->fc->slot[slot];
	if (c->uid > uid)
		return;
	if (c->uid < uid)
		*c = (struct flower_rule_counters){ .uid = uid };
	if (fast) {
		c->fast_packets += pk;
		c->fast_bytes += by;
	} else {
		c->slow_packets += pk;
		c->slow_bytes += by;
	}
	c->last_used_ns = now;
}

/* Folds what entry e counted since the last fold. */
static void kr_sync_ent(struct kdp_rules_ctl *kr, struct kr_ent *e, uint64_t now)
{
	struct vxdp_rcount c;
	if (kdp_rules_count_read(kr->r, (uint32_t)(e - kr->ents), &c) < 0)
		return;
	uint64_t pk = c.packets - e->synced_pk, by = c.bytes - e->synced_by;
	if (!pk)
		return;
	for (unsigned i = 0; i < e->n_rules; i++)
		kr_fold_rule(kr, e->rslot[i], e->ruid[i], pk, by, true, now);
	e->synced_pk = c.packets;
	e->synced_by = c.bytes;
	if (e->state == KR_LIVE)
		e->since_ns = now;
}

void kdp_rules_sync(struct kdp_rules_ctl *kr)
{
	uint64_t now = kdp_now_ns();
	for (unsigned i = 0; i < VXDP_RFLOWS; i++)
		if (kr->ents[i].state != KR_FREE)
			kr_sync_ent(kr, &kr->ents[i], now);
}

void kdp_rules_counters(struct kdp_rules_ctl *kr, struct flower_counters *fc)
{
	kdp_rules_sync(kr);
	flower_counters_merge(fc, kr->fc);
}

/* ---- the cache ------------------------------------------------------------- */

/* Takes e out of the map; its slot is freed after the grace period. */
static void kr_retire(struct kdp_rules_ctl *kr, struct kr_ent *e, bool del, uint64_t now)
{
	if (del)
		kdp_rules_flow_del(kr->r, &e->key);
	e->state = KR_RETIRED;
	e->since_ns = now;
	kr->n_live--;
}

static struct kr_ent *kr_alloc(struct kdp_rules_ctl *kr)
{
	for (unsigned n = 0; n < VXDP_RFLOWS; n++) {
		uint32_t i = (kr->cursor + n) % VXDP_RFLOWS;
		if (kr->ents[i].state == KR_FREE) {
			kr->cursor = (i + 1) % VXDP_RFLOWS;
			return &kr->ents[i];
		}
	}
	return NULL;
}

static void kr_install(struct kdp_rules_ctl *kr, const struct vxdp_rkey *key, const struct flower_verdict *v,
		       const struct vxdp_ract *act, uint32_t n_act)
{
	struct kr_ent *e = kr_alloc(kr);
	uint32_t slot = e ? (uint32_t)(e - kr->ents) : 0;
	if (!e || kdp_rules_count_zero(kr->r, slot) < 0) {
		kr->cache_full++;
		return;
	}
	struct vxdp_rval val = { .gen = kr->gen, .slot = slot, .n = n_act };
	memcpy(val.act, act, n_act * sizeof(*act));
	struct vxdp_rval old;
	bool had = false;
	if (kdp_rules_flow_put(kr->r, key, &val, &old, &had) < 0) {
		kr->cache_full++;
		return;
	}
	uint64_t now = kdp_now_ns();
	if (had && old.slot < VXDP_RFLOWS && kr->ents[old.slot].state == KR_LIVE)
		kr_retire(kr, &kr->ents[old.slot], false, now);
	*e = (struct kr_ent){ .state = KR_LIVE, .gen = kr->gen, .key = *key, .since_ns = now };
	for (unsigned i = 0; v->end == FLOWER_END_MATCHED && i < v->n_rules; i++) {
		e->rslot[i] = v->rules[i]->slot;
		e->ruid[i] = v->rules[i]->uid;
		e->n_rules++;
	}
	kr->n_live++;
	kr->installed++;
}

/* Deletes the entries of older generations and idle ones; frees the
 * slots whose grace period passed, after their last fold. */
static void kr_evict(struct kdp_rules_ctl *kr, uint64_t now, bool idle_pass)
{
	for (unsigned i = 0; i < VXDP_RFLOWS; i++) {
		struct kr_ent *e = &kr->ents[i];
		if (e->state == KR_LIVE && e->gen != kr->gen) {
			kr_retire(kr, e, true, now);
			kr->evicted_stale++;
		} else if (e->state == KR_LIVE && idle_pass) {
			kr_sync_ent(kr, e, now);
			if (now - e->since_ns > (uint64_t)KR_IDLE_S * 1000000000ull) {
				kr_retire(kr, e, true, now);
				kr->evicted_idle++;
			}
		} else if (e->state == KR_RETIRED && now - e->since_ns > KR_GRACE_NS) {
			kr_sync_ent(kr, e, now);
			e->state = KR_FREE;
		}
	}
}

static bool kr_has_rules(const struct flower_table *t, uint16_t id)
{
	return t && flower_table_port_has_rules(t, id);
}

/* The VNIs of the vxlan ports with rules, into vnis (deduplicated), and
 * at which of their hooks (VXDP_RVNI_*), into hooks. */
static unsigned kr_rule_vnis(struct kdp_rules_ctl *kr, const struct flower_table *t, const uint16_t *ids, size_t n,
			     uint32_t *vnis, uint8_t *hooks)
{
	unsigned m = 0;
	for (size_t i = 0; i < n; i++) {
		struct kr_port p;
		uint8_t h = (kr_has_rules(t, ids[i]) ? VXDP_RVNI_INGRESS : 0) |
			    (kr_has_rules(t, ids[i] | FLOWER_HOOK_EGRESS) ? VXDP_RVNI_EGRESS : 0);
		if (!h || !kr->port(kr->aux, ids[i], &p) || p.ifindex)
			continue;
		unsigned j = 0;
		while (j < m && vnis[j] != p.vni)
			j++;
		if (j == m && m < VXDP_MAX_VNIS) {
			vnis[m] = p.vni;
			hooks[m++] = 0;
		}
		if (j < m)
			hooks[j] |= h;
	}
	return m;
}

/* The ports whose ingress (egress) rules are `on` in t get (lose)
 * VXDP_PORT_RULES (the egress hook, kdp_port_egress). */
static void kr_port_flag(struct kdp_rules_ctl *kr, const struct flower_table *t, const uint16_t *ids, size_t n,
			 bool on)
{
	for (size_t i = 0; i < n; i++) {
		struct kr_port p;
		if (!kr->port(kr->aux, ids[i], &p) || !p.ifindex)
			continue;
		if (kr_has_rules(t, ids[i]) == on)
			kdp_port_flags(kr->k, p.ifindex, VXDP_PORT_RULES, on);
		int err;
		if (kr_has_rules(t, ids[i] | FLOWER_HOOK_EGRESS) == on && (err = kdp_port_egress(kr->k, p.ifindex, on)) < 0)
			VLOG_WARN("filter", "ifindex %u: cannot %s the egress rules' program: %s", p.ifindex,
				  on ? "attach" : "detach", strerror(-err));
	}
}

/* The mask of hook `hook` (port p's ingress or egress) into the new set:
 * what its rules read, and the port's identity: a vxlan device's hook
 * the whole tunnel section (its VNI and remote name the vxlan port).  At
 * an egress hook, where the frame came in is read when a rule reads
 * in_port (indev): in_ifindex, and at a VM port's the tunnel section too
 * (the vxlan port it names); else a VM port's egress reads of the tunnel
 * section what its rules read (enc_*), so frames from every remote share
 * a decision no rule tells apart. */
static void kr_mask_hook(struct kdp_rules_ctl *kr, const struct flower_table *t, uint16_t hook, const struct kr_port *p)
{
	bool egress = flower_hook_is_egress(hook);
	struct flow_key f;
	memset(&f, 0, sizeof(f));
	flower_table_hook_mask(t, hook, &f);
	struct vxdp_rkey mask;
	kr_rkey_from_flow(&f, UINT32_MAX, &mask);
	bool indev = egress && f.in_port;
	if (indev)
		mask.in_ifindex = UINT32_MAX;
	if (!p->ifindex || indev) {
		mask.tun_family = 0xff;
		mask.tun_vni = UINT32_MAX;
		memset(mask.tun_src, 0xff, sizeof(mask.tun_src));
		memset(mask.tun_dst, 0xff, sizeof(mask.tun_dst));
	} else if (mask.tun_vni || mask.tun_tos || mask.tun_ttl || mask.tun_dst_port ||
		   memcmp(mask.tun_src, (uint8_t[16]){ 0 }, 16) || memcmp(mask.tun_dst, (uint8_t[16]){ 0 }, 16)) {
		mask.tun_family = 0xff;
	}
	struct vxdp_rmask_key key = { .ifindex = p->ifindex ? p->ifindex : kdp_tun_ifindex(kr->k),
				      .vni = p->ifindex ? 0 : p->vni };
	if (egress)
		key.ifindex |= VXDP_RKEY_EGRESS;
	kr_masks_add(&kr->masks, &key, &mask);
}

/* The new table's masks into the kernel under generation gen. */
static void kr_masks_build(struct kdp_rules_ctl *kr, const struct flower_table *t, const uint16_t *ids, size_t n,
			   uint64_t gen)
{
	kr_masks_begin(&kr->masks);
	for (size_t i = 0; t && i < n; i++) {
		struct kr_port p;
		if (!kr->port(kr->aux, ids[i], &p))
			continue;
		if (kr_has_rules(t, ids[i]))
			kr_mask_hook(kr, t, ids[i], &p);
		if (kr_has_rules(t, ids[i] | FLOWER_HOOK_EGRESS))
			kr_mask_hook(kr, t, ids[i] | FLOWER_HOOK_EGRESS, &p);
	}
	kr_masks_write(&kr->masks, kr->r, gen);
}

void kdp_rules_changed(struct kdp_rules_ctl *kr, const struct flower_table *t, const uint16_t *ids, size_t n)
{
	int err;
	kr->t = t;
	if (t)
		flower_counters_reserve(kr->fc, flower_table_n_slots(t)); /* else grown by kr_fold_rule */
	uint32_t *vnis = kr->rvni_next;
	unsigned m = kr_rule_vnis(kr, t, ids, n, vnis, kr->rvni_hooks);
	bool tun_egress = false;
	for (unsigned j = 0; j < m; j++)
		tun_egress |= kr->rvni_hooks[j] & VXDP_RVNI_EGRESS;
	/* Ports (and VNIs) that gain rules first, so they start asking; then
	 * the generation: from here no cached decision of the old rules is
	 * used; then ports that lost them go straight to L2 switching. */
	kr_port_flag(kr, t, ids, n, true);
	if (tun_egress && (err = kdp_tun_egress(kr->k, true)) < 0)
		VLOG_WARN("filter", "cannot attach the vxlan ports' egress rules program: %s", strerror(-err));
	for (unsigned j = 0; j < m; j++)
		kdp_rules_vni_set(kr->r, vnis[j], kr->rvni_hooks[j]);
	kr_masks_build(kr, t, ids, n, kr->gen + 1);
	kr->gen++;
	err = kdp_rules_gen_set(kr->r, kr->gen);
	if (err < 0)
		VLOG_WARN("filter", "cannot move the kernel rules generation on: %s", strerror(-err));
	kr_masks_retire(&kr->masks, kr->r);
	kr_port_flag(kr, t, ids, n, false);
	for (unsigned i = 0; i < kr->n_rvni; i++) {
		bool keep = false;
		for (unsigned j = 0; j < m && !keep; j++)
			keep = vnis[j] == kr->rvni[i];
		if (!keep)
			kdp_rules_vni_set(kr->r, kr->rvni[i], 0);
	}
	if (!tun_egress)
		kdp_tun_egress(kr->k, false);
	memcpy(kr->rvni, vnis, m * sizeof(*vnis));
	kr->n_rvni = m;
}

/* ---- the slow path: missed frames ------------------------------------------ */

struct kr_build {
	struct vxdp_ract act[VXDP_RACT_MAX];
	uint32_t n;
	bool overflow;
};

static void kr_emit(struct kr_build *b, const struct vxdp_ract *a)
{
	if (b->n == VXDP_RACT_MAX) {
		b->overflow = true;
		return;
	}
	b->act[b->n++] = *a;
}

/* mirred to port id: a local port, or a vxlan port's remote(s) (the
 * tunnel_key's, else every remote of the port with its VNI, as
 * dp_rules.c does).  `stop`: a redirect (the last copy is the frame). */
static void kr_mirred(const struct kdp_rules_ctl *kr, struct kr_build *b, uint16_t id,
		      const struct flower_action *tun, bool stop)
{
	struct kr_port p;
	if (!kr->port(kr->aux, id, &p)) {
		if (stop) /* a redirect to a port gone drops, a mirror sends nothing */
			kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_DROP });
		return;
	}
	if (p.ifindex) {
		/* A port with egress rules is reached through its egress hook,
		 * which redirect_peer would skip, and which counts it. */
		bool erules = kr_has_rules(kr->t, id | FLOWER_HOOK_EGRESS);
		kr_emit(b, &(struct vxdp_ract){
			.kind = stop ? VXDP_RA_OUT_PORT : VXDP_RA_CLONE_PORT, .ifindex = p.ifindex,
			.flags = erules ? VXDP_RAF_ERULES : (p.flags & VXDP_PORT_VETH) ? VXDP_RAF_VETH : 0 });
		return;
	}
	unsigned n = tun ? 1 : p.n_remotes;
	for (unsigned i = 0; i < n; i++) {
		struct vxdp_ract a = { .kind = (stop && i + 1 == n) ? VXDP_RA_OUT_TUN : VXDP_RA_CLONE_TUN,
				       .hdr_vni = p.vni };
		if (tun) {
			a.vni = tun->tun_vni;
			a.flags = tun->tun_family == 6 ? VXDP_RAF_V6 : 0;
			memcpy(a.remote, tun->tun_dst, 16);
		} else {
			a.vni = p.vni;
			a.flags = p.remotes[i].family == AF_INET6 ? VXDP_RAF_V6 : 0;
			memcpy(a.remote, p.remotes[i].bytes, 16);
		}
		kr_emit(b, &a);
	}
	if (stop && !n)
		kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_DROP });
}

/* Whether b's list ends the frame's way itself (a redirect or a drop),
 * rather than letting it go on. */
static bool kr_sends(const struct kr_build *b)
{
	uint8_t last = b->n ? b->act[b->n - 1].kind : VXDP_RA_END;
	return last == VXDP_RA_DROP || last == VXDP_RA_OUT_PORT || last == VXDP_RA_OUT_TUN;
}

/* The kernel action list of a verdict (dp_rules.c's semantics). */
static void kr_compile(const struct kdp_rules_ctl *kr, const struct flower_verdict *v, struct kr_build *b)
{
	b->n = 0;
	b->overflow = false;
	if (v->end == FLOWER_END_LOOP) {
		kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_DROP });
		return;
	}
	const struct flower_action *tun = NULL;
	for (unsigned r = 0; v->end == FLOWER_END_MATCHED && r < v->n_rules; r++) {
		const struct flower_rule *rule = v->rules[r];
		for (uint32_t i = 0; i < rule->n_actions; i++) {
			const struct flower_action *a = &rule->actions[i];
			switch (a->type) {
			case FLOWER_ACT_REDIRECT:
				kr_mirred(kr, b, a->port, tun, true);
				return;
			case FLOWER_ACT_MIRROR:
				kr_mirred(kr, b, a->port, tun, false);
				break;
			case FLOWER_ACT_TUNNEL_SET:
				tun = a;
				break;
			case FLOWER_ACT_TUNNEL_UNSET:
				tun = NULL;
				break;
			case FLOWER_ACT_VLAN_PUSH:
				kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_VLAN_PUSH, .tpid = a->vlan_tpid,
								 .tci = a->vlan_tci });
				break;
			case FLOWER_ACT_VLAN_POP:
				kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_VLAN_POP });
				break;
			case FLOWER_ACT_VLAN_MODIFY:
				kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_VLAN_MODIFY, .tci = a->vlan_tci,
								 .flags = a->set_prio ? VXDP_RAF_SET_PRIO : 0 });
				break;
			case FLOWER_ACT_DROP:
				kr_emit(b, &(struct vxdp_ract){ .kind = VXDP_RA_DROP });
				return;
			case FLOWER_ACT_PASS:
				return;
			default: /* goto: the next rule of the verdict */
				break;
			}
		}
	}
}

/* The virtio_net_hdr of a re-injected frame: a TCP/UDP checksum the VM
 * left to offload (the field does not verify: it holds the pseudo
 * header's sum) is completed by the kernel; a GSO frame stays one. */
static void kr_offloads(const struct pkt *pkt, const struct flow_key *key, const uint8_t *f,
			uint16_t gso_size, struct kdp_reinject *d)
{
	bool tcp = key->nw_proto == IP_PROTO_TCP, udp = key->nw_proto == IP_PROTO_UDP;
	if (!(tcp || udp) || key->nw_frag || pkt->l4_ofs == PKT_OFS_NONE || pkt->l3_ofs == PKT_OFS_NONE)
		return;
	uint32_t l4 = pkt->l4_ofs, l4len = pkt_len(pkt) - l4;
	uint16_t off = tcp ? 16 : 6;
	bool ok;
	if (udp && key->nw_family == 4 && f[l4 + 6] == 0 && f[l4 + 7] == 0) {
		ok = true; /* IPv4 UDP without a checksum */
	} else {
		const uint8_t *ip = f + pkt->l3_ofs;
		uint32_t s = key->nw_family == 4 ? csum_pseudo_ipv4(ip + 12, ip + 16, key->nw_proto, l4len)
						 : csum_pseudo_ipv6(ip + 8, ip + 24, key->nw_proto, l4len);
		ok = csum_fold(csum_partial(f + l4, l4len, s)) == 0;
	}
	if (!ok || gso_size) {
		d->needs_csum = true;
		d->csum_start = (uint16_t)l4;
		d->csum_offset = off;
	}
	if (gso_size && pkt->payload_ofs != PKT_OFS_NONE) {
		d->gso_type = udp ? VIRTIO_NET_HDR_GSO_UDP_L4
				  : key->nw_family == 6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
		d->gso_size = gso_size;
		d->hdr_len = pkt->payload_ofs;
	}
}

/* A vxlan device's frame: the key's tunnel section as decap_vxlan fills
 * it (flow_extract.c), from the program's key (the outer UDP source port
 * is not known here, and no rule matches it). */
static void kr_key_tunnel(struct flow_key *key, const struct vxdp_rkey *k)
{
	key->tun_family = k->tun_family;
	memcpy(key->tun_src, k->tun_src, 16);
	memcpy(key->tun_dst, k->tun_dst, 16);
	key->tun_vni = k->tun_vni;
	key->tun_src_port = 0;
	key->tun_dst_port = k->tun_dst_port;
	key->tun_tos = k->tun_tos;
	key->tun_ttl = k->tun_ttl;
}

/* The frame as on the wire: a tag in skb metadata back in its place. */
static uint32_t kr_frame(struct kdp_rules_ctl *kr, const struct vxdp_rupcall *u, const uint8_t *bytes)
{
	uint32_t n = u->cap_len;
	if (!u->vlan_present || n < 12) {
		memcpy(kr->frame, bytes, n);
		return n;
	}
	memcpy(kr->frame, bytes, 12);
	kr->frame[12] = (uint8_t)(u->vlan_proto >> 8);
	kr->frame[13] = (uint8_t)u->vlan_proto;
	kr->frame[14] = (uint8_t)(u->vlan_tci >> 8);
	kr->frame[15] = (uint8_t)u->vlan_tci;
	memcpy(kr->frame + 16, bytes + 12, n - 12);
	return n + 4;
}

/* An egress hook's frame: the port it came in on (`indev`), from the
 * key's in_ifindex: a VM port's, or the vxlan device's with the tunnel
 * section naming the vxlan port (a VM port's hook: tun_hook false; the
 * device's own hook has the sending tunnel there, and indev naming a
 * vxlan port is refused on its rules).  0, no port, for anything else
 * (the host, the taps' slow-path link). */
static uint16_t kr_in_port(struct kdp_rules_ctl *kr, const struct vxdp_rkey *uk, bool tun_hook)
{
	uint16_t id = 0;
	if (uk->in_ifindex != kdp_tun_ifindex(kr->k))
		return uk->in_ifindex && kr->by_ifindex(kr->aux, uk->in_ifindex, &id) ? id : 0;
	return !tun_hook && uk->tun_family && kr->by_vtep(kr->aux, uk->tun_vni, uk->tun_family, uk->tun_src, &id)
		       ? id : 0;
}

/* Where the frame came in, for the egress hooks it meets after its
 * re-injection (vxdp_rules_abi.h): an ingress hook's port, or what an
 * egress hook's key says; the tunnel section of the vxlan device's frame
 * (but not the sending one of the device's egress hook). */
static void kr_origin(const struct vxdp_rupcall *u, bool tun_hook, struct vxdp_rorigin *o)
{
	const struct vxdp_rkey *uk = &u->key;
	bool egress = u->ifindex & VXDP_RKEY_EGRESS;
	if (tun_hook && egress)
		memset(o, 0, sizeof(*o));
	else
		memcpy(o, &uk->in_ifindex, VXDP_RORIGIN_SIZE);
	o->in_ifindex = egress ? uk->in_ifindex : u->ifindex;
}

static void kr_upcall(void *aux, const struct vxdp_rupcall *u, const uint8_t *bytes)
{
	struct kdp_rules_ctl *kr = aux;
	kr->upcalls++;
	uint16_t id;
	const struct vxdp_rkey *uk = &u->key;
	/* The hook: a port's ingress or egress (the frame as it leaves, with
	 * where it came in), a VM port's or the vxlan device's. */
	bool egress = u->ifindex & VXDP_RKEY_EGRESS;
	bool tun = (u->ifindex & ~VXDP_RKEY_EGRESS) == kdp_tun_ifindex(kr->k);
	if (tun ? !kr->by_vtep(kr->aux, uk->tun_vni, uk->tun_family, uk->tun_src, &id)
		: !kr->by_ifindex(kr->aux, u->ifindex & ~VXDP_RKEY_EGRESS, &id)) {
		kr->no_port++;
		return;
	}
	if (u->cap_len < u->len) {
		kr->too_big++; /* more than a perf event holds: dropped */
		return;
	}
	uint32_t len = kr_frame(kr, u, bytes);
	struct flow_key key;
	pkt_reset(kr->pkt);
	if (pkt_set_data(kr->pkt, kr->frame, len) < 0) {
		kr->too_big++;
		return;
	}
	kr->pkt->in_port = egress ? kr_in_port(kr, uk, tun) : id;
	if (flow_extract(kr->pkt, 0, &key) != DROP_NONE) {
		kr->malformed++; /* the userspace datapath drops it too */
		return;
	}
	if (tun || (egress && uk->in_ifindex == kdp_tun_ifindex(kr->k)))
		kr_key_tunnel(&key, uk);
	struct flower_verdict v = { .end = FLOWER_END_NO_MATCH };
	if (kr->t)
		flower_table_classify_hook(kr->t, egress ? id | FLOWER_HOOK_EGRESS : id, &key, &v);
	uint64_t now = kdp_now_ns();
	for (unsigned i = 0; v.end != FLOWER_END_NO_MATCH && i < v.n_rules; i++)
		kr_fold_rule(kr, v.rules[i]->slot, v.rules[i]->uid, 1, u->len, false, now);
	struct kr_build b;
	kr_compile(kr, &v, &b);
	if (b.overflow) {
		kr->too_many_actions++; /* more kernel actions than a decision holds: dropped */
		return;
	}
	struct vxdp_rkey mine;
	kr_rkey_from_flow(&key, u->ifindex, &mine);
	mine.in_ifindex = uk->in_ifindex;
	if (!u->cacheable)
		kr->uncacheable++;
	else if (memcmp(&mine, &u->key, sizeof(mine)) || !kr_rkey_covers(&key, &mine))
		kr->key_mismatch++;
	else {
		kr_masks_apply(&kr->masks, &mine, tun); /* one decision for every frame equal under the mask */
		kr_install(kr, &mine, &v, b.act, b.n);
	}
	if (egress && tun && !kr_sends(&b)) {
		/* Re-injected, it has no tunnel key: the list sends it to its
		 * remote itself, past the device's egress hook. */
		if (b.n == VXDP_RACT_MAX) {
			kr->too_many_actions++;
			return;
		}
		struct vxdp_ract *out = &b.act[b.n++];
		*out = (struct vxdp_ract){ .kind = VXDP_RA_OUT_TUN, .vni = uk->tun_vni, .hdr_vni = uk->tun_vni,
					   .flags = VXDP_RAF_EGRESS_DONE | (uk->tun_family == 6 ? VXDP_RAF_V6 : 0) };
		memcpy(out->remote, uk->tun_src, 16);
	}
	struct kdp_reinject d = { .ifindex = u->ifindex, .vni = uk->tun_vni, .n = b.n, .act = b.act };
	kr_origin(u, tun, &d.origin);
	kr_offloads(kr->pkt, &key, kr->frame, u->gso_size, &d);
	if (kdp_rules_reinject(kr->r, &d, kr->frame, len) < 0)
		kr->reinject_errors++;
}

void kdp_rules_tick(struct kdp_rules_ctl *kr)
{
	/* Bounded work per turn: the control loop serves commands too. */
	for (int i = 0; i < 16 && kdp_rules_poll(kr->r, kr_upcall, kr) > 0; i++)
		;
	uint64_t now = kdp_now_ns();
	bool stale = false;
	for (unsigned i = 0; i < VXDP_RFLOWS && !stale; i++)
		stale = kr->ents[i].state == KR_LIVE && kr->ents[i].gen != kr->gen;
	if (!stale && now - kr->last_tick_ns < 1000000000ull)
		return;
	kr->last_tick_ns = now;
	bool idle = now - kr->last_idle_ns >= 5000000000ull;
	if (idle)
		kr->last_idle_ns = now;
	kr_evict(kr, now, idle);
}

/* ---- what the operator sees ------------------------------------------------ */

/* Every field of the rules path's counters is in VXDP_RSTATS_COUNTERS. */
#define KR_ONE(f, help) +1
_Static_assert(sizeof(struct vxdp_rstats) == (0 VXDP_RSTATS_COUNTERS(KR_ONE)) * sizeof(__u64),
	       "struct vxdp_rstats and VXDP_RSTATS_COUNTERS disagree");
#undef KR_ONE

void kdp_rules_print_port(struct kdp_rules_ctl *kr, uint32_t ifindex, struct ctl_print *out)
{
	struct vxdp_rstats s;
	if (kdp_rules_stats_read(kr->r, ifindex, &s) < 0)
		return;
	ctl_print_open_object(out, "rules");
	ctl_print_text(out, " rules:");
	/* Each counter as "NAME VALUE", its JSON key NAME (the field's). */
#define KR_PRINT(f, help) ctl_print_uint(out, CTL_PRINT_ANY, #f, " " #f " %" PRIu64, s.f);
	VXDP_RSTATS_COUNTERS(KR_PRINT)
#undef KR_PRINT
	ctl_print_close_object(out);
}

bool kdp_rules_port_stats(struct kdp_rules_ctl *kr, uint32_t ifindex, struct vxdp_rstats *s)
{
	uint16_t id;
	if (!kr->t || !kr->by_ifindex(kr->aux, ifindex, &id) || !flower_table_port_has_rules(kr->t, id))
		return false;
	return kdp_rules_stats_read(kr->r, ifindex, s) == 0;
}

bool kdp_rules_port_id_stats(struct kdp_rules_ctl *kr, uint16_t id, struct vxdp_rstats *s)
{
	struct kr_port p;
	if (!kr->t || !flower_table_port_has_rules(kr->t, id) || !kr->port(kr->aux, id, &p))
		return false;
	return kdp_rules_stats_read(kr->r, p.ifindex ? p.ifindex : VXDP_RSTATS_VNI | p.vni, s) == 0;
}

void kdp_rules_cache_state(const struct kdp_rules_ctl *kr, uint64_t *entries, uint64_t *cache_full)
{
	*entries = kr->n_live;
	*cache_full = kr->cache_full;
}

void kdp_rules_print(struct kdp_rules_ctl *kr, struct ctl_print *out)
{
	ctl_print_open_object(out, "rule_cache");
	ctl_print_text(out, "rule cache:");
	ctl_print_uint(out, CTL_PRINT_ANY, "generation", " generation %" PRIu64, kr->gen);
	ctl_print_uint(out, CTL_PRINT_ANY, "entries", " entries %" PRIu64, kr->n_live);
	ctl_print_uint(out, CTL_PRINT_ANY, "max", "/%" PRIu64, (uint64_t)VXDP_RFLOWS);
	ctl_print_uint(out, CTL_PRINT_ANY, "masks", " masks %" PRIu64, (uint64_t)kr->masks.n);
	ctl_print_uint(out, CTL_PRINT_ANY, "mask_errors", " mask_errors %" PRIu64, kr->masks.write_errors);
	ctl_print_uint(out, CTL_PRINT_ANY, "upcalls", " upcalls %" PRIu64, kr->upcalls);
	ctl_print_uint(out, CTL_PRINT_ANY, "installed", " installed %" PRIu64, kr->installed);
	ctl_print_uint(out, CTL_PRINT_ANY, "evicted_idle", " evicted_idle %" PRIu64, kr->evicted_idle);
	ctl_print_uint(out, CTL_PRINT_ANY, "evicted_stale", " evicted_stale %" PRIu64, kr->evicted_stale);
	ctl_print_uint(out, CTL_PRINT_ANY, "cache_full", " cache_full %" PRIu64, kr->cache_full);
	ctl_print_uint(out, CTL_PRINT_ANY, "uncacheable", " uncacheable %" PRIu64, kr->uncacheable);
	ctl_print_uint(out, CTL_PRINT_ANY, "key_mismatch", " key_mismatch %" PRIu64, kr->key_mismatch);
	ctl_print_uint(out, CTL_PRINT_ANY, "malformed", " malformed %" PRIu64, kr->malformed);
	ctl_print_uint(out, CTL_PRINT_ANY, "too_big", " too_big %" PRIu64, kr->too_big);
	ctl_print_uint(out, CTL_PRINT_ANY, "too_many_actions", " too_many_actions %" PRIu64, kr->too_many_actions);
	ctl_print_uint(out, CTL_PRINT_ANY, "reinject_errors", " reinject_errors %" PRIu64, kr->reinject_errors);
	ctl_print_uint(out, CTL_PRINT_ANY, "upcalls_lost", " upcalls_lost %" PRIu64 "\n", kdp_rules_lost(kr->r));
	ctl_print_close_object(out);
}
