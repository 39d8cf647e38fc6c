/* The kernel datapath's FDB as the control thread keeps it: learning
 * from upcalls under the caps, ageing from the programs' last-used
 * times, flushing, static entries, and `fdb show` (contract:
 * control/kdp_ports.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"
#include "switch/fdb.h"
#include "util/vlog.h"

void kc_forget(struct kdp_ctl *kc, uint32_t vni, const struct vxdp_fdb_val *v)
{
	if (v->flags & VXDP_FDB_STATIC) {
		if (kc->n_static)
			kc->n_static--;
		return;
	}
	if (v->flags & VXDP_FDB_EVPN) {
		if (kc->n_evpn)
			kc->n_evpn--;
		return;
	}
	struct kc_port *p = (v->flags & VXDP_FDB_REMOTE) ? NULL : kc_by_ifindex(kc, v->ifindex);
	if (p && p->n_macs)
		p->n_macs--;
	struct kc_vni *cv = kc_vni(kc, vni, false);
	if (cv && cv->n_macs)
		cv->n_macs--;
}

static void kc_learn(void *aux, const struct vxdp_upcall *u)
{
	struct kdp_ctl *kc = aux;
	struct kc_port *p = NULL;
	struct vxdp_fdb_val v = { .last_used_ns = kdp_now_ns() };
	if (u->kind == VXDP_UPCALL_LEARN_LOCAL) {
		p = kc_by_ifindex(kc, u->ifindex);
		if (!p || p->spec.vni != u->vni)
			goto refused;
		v.ifindex = p->ifindex;
		v.flags = (p->flags & VXDP_PORT_VETH) ? VXDP_FDB_VETH : 0;
	} else if (u->kind == VXDP_UPCALL_LEARN_REMOTE) {
		if (!kc_vtep(kc, u->vni, u->flags, u->remote))
			goto refused;
		v.flags = VXDP_FDB_REMOTE | (u->flags & VXDP_FDB_V6);
		memcpy(v.remote, u->remote, 16);
	} else {
		goto refused;
	}
	struct vxdp_fdb_val old;
	bool had = kdp_fdb_get(kc->k, u->vni, u->mac, &old) == 0;
	/* An operator's entry never moves; EVPN's moves to a local port only
	 * (RFC 7432 mobility: evpn.c advertises it from here), as the
	 * userspace FDB does (switch/fdb.c). */
	if (had && ((old.flags & VXDP_FDB_STATIC) ||
		    ((old.flags & VXDP_FDB_EVPN) && u->kind == VXDP_UPCALL_LEARN_REMOTE)))
		goto refused;
	/* Nor does a datagram take a local MAC on an EVPN VNI (the programs
	 * do not ask; an upcall queued before the MAC was learned here may). */
	if (had && !(old.flags & VXDP_FDB_REMOTE) && u->kind == VXDP_UPCALL_LEARN_REMOTE &&
	    (kc_vni_outer(kc, u->vni).flags & VXDP_VNI_EVPN))
		goto refused;
	struct kc_vni *cv = kc_vni(kc, u->vni, true);
	if (!had && (!cv || (kc->fdb_max && cv->n_macs >= kc->fdb_max)))
		goto refused;
	if (p && p->spec.max_macs && p->n_macs >= p->spec.max_macs)
		goto refused;
	if (kdp_fdb_add(kc->k, u->vni, u->mac, &v) < 0)
		goto refused;
	if (had)
		kc_forget(kc, u->vni, &old);
	if (p)
		p->n_macs++;
	cv->n_macs++;
	kc->learned++;
	return;
refused:
	kc->learn_refused++;
}

struct kc_sweep {
	struct kdp_ctl *kc;
	uint64_t now, max_age;     /* age: remove entries older than max_age */
	uint32_t ifindex;          /* or: remove entries behind this port */
	const struct kc_port *vxlan; /* or: remote entries of this vxlan port */
	bool flush;                /* or: learned entries of flush_vni (UINT32_MAX: all) */
	uint32_t flush_vni;
	struct vxdp_fdb_key keys[256];
	struct vxdp_fdb_val vals[256];
	unsigned n;
};

static void kc_sweep_one(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	struct kc_sweep *s = aux;
	/* Static and EVPN entries never age nor flush; they go with their port. */
	if (s->n == 256 || ((v->flags & (VXDP_FDB_STATIC | VXDP_FDB_EVPN)) && !s->ifindex && !s->vxlan))
		return;
	bool go;
	if (s->ifindex)
		go = !(v->flags & VXDP_FDB_REMOTE) && v->ifindex == s->ifindex;
	else if (s->vxlan)
		go = (v->flags & VXDP_FDB_REMOTE) && key->vni == s->vxlan->spec.vni;
	else if (s->flush)
		go = s->flush_vni == UINT32_MAX || key->vni == s->flush_vni;
	else
		go = s->now > v->last_used_ns && s->now - v->last_used_ns > s->max_age;
	if (go) {
		s->keys[s->n] = *key;
		s->vals[s->n++] = *v;
	}
}

/* Removes what `s` selects, 256 entries a pass. */
static unsigned kc_sweep(struct kdp_ctl *kc, struct kc_sweep *s)
{
	unsigned total = 0;
	do {
		s->n = 0;
		kdp_fdb_dump(kc->k, kc_sweep_one, s);
		for (unsigned i = 0; i < s->n; i++) {
			if (kdp_fdb_del(kc->k, s->keys[i].vni, s->keys[i].mac) == 0)
				kc_forget(kc, s->keys[i].vni, &s->vals[i]);
		}
		total += s->n;
	} while (s->n == 256);
	return total;
}

void kdp_ctl_tick(struct kdp_ctl *kc)
{
	kdp_upcall_poll(kc->k, 0, kc_learn, kc);
	kc_capture_poll(kc);
	if (kc->kr)
		kdp_rules_tick(kc->kr);
	uint64_t now = kdp_now_ns();
	if (kc->ageing_ns >= UINT64_MAX / 2 || now - kc->last_age_ns < 1000000000ull)
		return;
	kc->last_age_ns = now;
	struct kc_sweep *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->kc = kc;
	s->now = now;
	s->max_age = kc->ageing_ns;
	kc->aged += kc_sweep(kc, s);
	free(s);
}

unsigned kc_flush_port(struct kdp_ctl *kc, const struct kc_port *p)
{
	struct kc_sweep *s = calloc(1, sizeof(*s));
	if (!s)
		return 0;
	s->kc = kc;
	if (p->ifindex)
		s->ifindex = p->ifindex;
	else
		s->vxlan = p;
	unsigned n = kc_sweep(kc, s);
	free(s);
	return n;
}

unsigned kc_flush_learned(struct kdp_ctl *kc, uint32_t vni)
{
	struct kc_sweep *s = calloc(1, sizeof(*s));
	if (!s)
		return 0;
	*s = (struct kc_sweep){ .kc = kc, .flush = true, .flush_vni = vni };
	unsigned n = kc_sweep(kc, s);
	free(s);
	return n;
}

/* ---- static entries (dpif fdb_add/fdb_del: vxctl fdb add/del, control.c) ---- */

_Static_assert((int)KC_MAX_STATIC == (int)FDB_DEFAULT_MAX_STATIC, "control.c's refusal names one limit for both datapaths");

/* The map value a static entry to dst is (kdp_ports_internal.h). */
int kc_static_dst_val(struct kdp_ctl *kc, uint32_t vni, const struct fdb_dst *dst, struct vxdp_fdb_val *v)
{
	*v = (struct vxdp_fdb_val){ .flags = VXDP_FDB_STATIC, .last_used_ns = kdp_now_ns() };
	if (dst->type == FDB_DST_PORT) {
		const struct kc_port *p = kc_by_id(kc, dst->port);
		if (!p || p->spec.type == DPIF_PORT_VXLAN || p->spec.vni != vni)
			return -EINVAL;
		v->ifindex = p->ifindex;
		v->flags |= (p->flags & VXDP_PORT_VETH) ? VXDP_FDB_VETH : 0;
		return 0;
	}
	if (dst->type != FDB_DST_VTEP || (dst->family != 4 && dst->family != 6))
		return -EINVAL;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (p->used && p->spec.type == DPIF_PORT_VXLAN && p->spec.vni == vni &&
		    p->spec.local.family == (dst->family == 6 ? AF_INET6 : AF_INET)) {
			v->flags |= VXDP_FDB_REMOTE | (dst->family == 6 ? VXDP_FDB_V6 : 0);
			memcpy(v->remote, dst->addr, dst->family == 6 ? 16 : 4);
			return 0;
		}
	}
	return -ENOENT;
}

int kc_static_put(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], const struct vxdp_fdb_val *v)
{
	struct vxdp_fdb_val old;
	bool had = kdp_fdb_get(kc->k, vni, mac, &old) == 0;
	if (!(had && (old.flags & VXDP_FDB_STATIC)) && kc->n_static >= KC_MAX_STATIC)
		return -ENOSPC;
	int ret = kdp_fdb_add(kc->k, vni, mac, v);
	if (ret < 0)
		return ret;
	if (had)
		kc_forget(kc, vni, &old);
	kc->n_static++;
	return 0;
}

int kc_fdb_del(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6])
{
	struct vxdp_fdb_val old;
	if (kdp_fdb_get(kc->k, vni, mac, &old) < 0 || kdp_fdb_del(kc->k, vni, mac) < 0)
		return -ENOENT;
	kc_forget(kc, vni, &old);
	return 0;
}

/* ---- BGP EVPN's entries (kdp_ports.h) -------------------------------------- */

int kdp_ctl_evpn_mac_add(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], const uint8_t vtep[4])
{
	bool vxlan = false;
	for (unsigned i = 0; i < KC_MAX_PORTS && !vxlan; i++)
		vxlan = kc->ports[i].used && kc->ports[i].spec.type == DPIF_PORT_VXLAN && kc->ports[i].spec.vni == vni;
	if (!vxlan)
		return -ENOENT;
	struct vxdp_fdb_val v = { .flags = VXDP_FDB_REMOTE | VXDP_FDB_EVPN, .last_used_ns = kdp_now_ns() }, old;
	memcpy(v.remote, vtep, 4);
	bool had = kdp_fdb_get(kc->k, vni, mac, &old) == 0;
	if (had && (old.flags & VXDP_FDB_STATIC))
		return -EEXIST;
	if (had && (old.flags & VXDP_FDB_EVPN) && !memcmp(old.remote, v.remote, 16))
		return 0;
	if (!(had && (old.flags & VXDP_FDB_EVPN)) && kc->n_evpn >= KC_MAX_EVPN)
		return -ENOSPC;
	int err = kdp_fdb_add(kc->k, vni, mac, &v);
	if (err < 0)
		return err;
	if (had)
		kc_forget(kc, vni, &old);
	kc->n_evpn++;
	return 0;
}

int kdp_ctl_evpn_mac_del(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6])
{
	struct vxdp_fdb_val old;
	if (kdp_fdb_get(kc->k, vni, mac, &old) < 0 || !(old.flags & VXDP_FDB_EVPN))
		return -ENOENT;
	int err = kdp_fdb_del(kc->k, vni, mac);
	if (err == 0)
		kc_forget(kc, vni, &old);
	return err;
}

/* The kernel entry as switch/fdb.h describes one. */
static void kc_entry_info(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], const struct vxdp_fdb_val *v,
			  uint64_t now, struct fdb_entry_info *e)
{
	*e = (struct fdb_entry_info){
		.vni = vni,
		.is_static = v->flags & (VXDP_FDB_STATIC | VXDP_FDB_EVPN),
		.evpn = v->flags & VXDP_FDB_EVPN,
		.age_ns = now > v->last_used_ns ? now - v->last_used_ns : 0,
	};
	memcpy(e->mac, mac, 6);
	if (v->flags & VXDP_FDB_REMOTE) {
		const struct kc_port *p = kc_vtep(kc, vni, v->flags, v->remote);
		uint16_t family = (v->flags & VXDP_FDB_V6) ? AF_INET6 : AF_INET;
		for (unsigned i = 0; !p && i < KC_MAX_PORTS; i++) {
			/* A static entry's VTEP need not be one the port floods
			 * to: the VNI's vxlan port of its family. */
			const struct kc_port *q = &kc->ports[i];
			if (q->used && q->spec.type == DPIF_PORT_VXLAN && q->spec.vni == vni &&
			    q->spec.local.family == family)
				p = q;
		}
		e->dst.type = FDB_DST_VTEP;
		e->dst.family = (v->flags & VXDP_FDB_V6) ? 6 : 4;
		e->dst.port = p ? kc_id(kc, p) : 0;
		memcpy(e->dst.addr, v->remote, e->dst.family == 6 ? 16 : 4);
	} else {
		const struct kc_port *p = kc_by_ifindex(kc, v->ifindex);
		e->dst.type = FDB_DST_PORT;
		e->dst.port = p ? kc_id(kc, p) : 0;
	}
}

bool kdp_ctl_fdb_lookup(struct kdp_ctl *kc, uint32_t vni, const uint8_t mac[6], struct fdb_dst *out)
{
	struct vxdp_fdb_val v;
	if (kdp_fdb_get(kc->k, vni, mac, &v) < 0)
		return false;
	struct fdb_entry_info e;
	kc_entry_info(kc, vni, mac, &v, kdp_now_ns(), &e);
	*out = e.dst;
	return true;
}

struct kc_walk {
	struct kdp_ctl *kc;
	uint32_t vni;
	uint64_t now;
	int (*cb)(const struct fdb_entry_info *e, void *ctx);
	void *ctx;
	int err;   /* the first the callback returned */
};

static void kc_walk_one(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	struct kc_walk *w = aux;
	if (w->vni != UINT32_MAX && key->vni != w->vni)
		return;
	struct fdb_entry_info e;
	kc_entry_info(w->kc, key->vni, key->mac, v, w->now, &e);
	if (w->err == 0) {
		int err = w->cb(&e, w->ctx);
		w->err = err < 0 ? err : 0;
	}
}

int kdp_ctl_fdb_walk(struct kdp_ctl *kc, uint32_t vni, int (*cb)(const struct fdb_entry_info *e, void *ctx),
		     void *ctx)
{
	struct kc_walk w = { .kc = kc, .vni = vni, .now = kdp_now_ns(), .cb = cb, .ctx = ctx };
	int n = kdp_fdb_dump(kc->k, kc_walk_one, &w);
	return n < 0 ? n : w.err;
}
