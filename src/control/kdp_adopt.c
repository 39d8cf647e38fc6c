/* Kept state of the kernel datapath (vxswitchd --keep-datapath): removing
 * it, adopting it at start and reconciling it with the configuration
 * (contract: control/kdp_ports.h, dp/kernel/kdp.h "Kept state"). */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "control/kdp_ports_internal.h"
#include "port/rtnl.h"
#include "util/vlog.h"

static void kc_kept_one(void *aux, uint32_t ifindex, const struct vxdp_port *p)
{
	struct kdp_ctl *kc = aux;
	if (kc->n_kept < KC_MAX_PORTS)
		kc->kept[kc->n_kept++] = (struct kc_kept){ .ifindex = ifindex, .flags = p->flags };
}

void kc_adopt_begin(struct kdp_ctl *kc)
{
	kc->kept = calloc(KC_MAX_PORTS, sizeof(*kc->kept));
	if (!kc->kept)
		return; /* then nothing is adopted: adopt_done removes nothing either */
	kdp_port_each(kc->k, kc_kept_one, kc);
	VLOG_INFO("kdp", "adopted the kept kernel datapath: %u ports keep forwarding until the "
		  "configuration says otherwise", kc->n_kept);
}

/* Deletes the veth pairs a kept ports map marks ours (their host ends
 * are in this namespace; the VM end goes with the pair). */
static void kc_delete_our_veth(void *aux, uint32_t ifindex, const struct vxdp_port *p)
{
	(void)aux;
	char name[IF_NAMESIZE];
	if ((p->flags & VXDP_PORT_OURS) && if_indextoname(ifindex, name))
		rtnl_link_delete(-1, name);
}

int kdp_ctl_cleanup(uint16_t dstport, const char *bpffs, char *why, size_t why_len)
{
	if (!kdp_kept_exists(bpffs, NULL))
		return 0;
	struct kdp *k;
	struct kdp_opts o = { .dstport = dstport ? dstport : CTL_VXLAN_DEFAULT_DSTPORT, .keep = true, .no_tun = true,
			      .bpffs = bpffs };
	int err = kdp_open(&o, &k, why, (unsigned)why_len);
	if (err == 0) {
		kdp_port_each(k, kc_delete_our_veth, NULL);
		kdp_close(k);
	}
	kdp_kept_remove(bpffs, NULL);
	return err;
}


static struct kc_kept *kc_kept_find(struct kdp_ctl *kc, uint32_t ifindex)
{
	for (unsigned i = 0; kc->kept && i < kc->n_kept; i++)
		if (kc->kept[i].ifindex == ifindex)
			return &kc->kept[i];
	return NULL;
}

void kc_kept_claim(struct kdp_ctl *kc, uint32_t ifindex)
{
	struct kc_kept *kp = kc_kept_find(kc, ifindex);
	if (kp)
		kp->claimed = true;
}

/* A `port add type veth` whose pair a kept run made: its host end (same
 * name, here) is taken over as it is, with the VM's end and the frames
 * it carries untouched.  The VM end's namespace is not checked: the
 * pair was made from the same line. */
bool kc_adopt_veth(struct kdp_ctl *kc, struct kc_port *p)
{
	uint32_t idx = if_nametoindex(p->spec.name);
	struct kc_kept *kp = idx ? kc_kept_find(kc, idx) : NULL;
	if (!kp || kp->claimed || !(kp->flags & VXDP_PORT_OURS))
		return false;
	p->ifindex = idx;
	p->flags |= VXDP_PORT_VETH | VXDP_PORT_OURS;
	p->made_veth = true;
	return true;
}


struct kc_vni_list {
	uint32_t vni[KC_MAX_VNIS * 4];
	unsigned n;
};

static void kc_vni_collect(void *aux, uint32_t vni)
{
	struct kc_vni_list *l = aux;
	if (l->n < sizeof(l->vni) / sizeof(l->vni[0]))
		l->vni[l->n++] = vni;
}

static bool kc_vni_configured(const struct kdp_ctl *kc, uint32_t vni)
{
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used && kc->ports[i].spec.vni == vni)
			return true;
	return false;
}

/* Kept FDB entries: those of a port or VNI this run has are counted
 * again (for the caps); the others go. */
struct kc_recount {
	struct kdp_ctl *kc;
	struct vxdp_fdb_key keys[256];
	unsigned n;
};

static void kc_recount_one(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	struct kc_recount *r = aux;
	struct kdp_ctl *kc = r->kc;
	struct kc_port *p = (v->flags & VXDP_FDB_REMOTE) ? NULL : kc_by_ifindex(kc, v->ifindex);
	bool keep = kc_vni_configured(kc, key->vni) && ((v->flags & VXDP_FDB_REMOTE) || (p && p->spec.vni == key->vni));
	if (!keep) {
		if (r->n < 256)
			r->keys[r->n++] = *key;
		return;
	}
	if (v->flags & VXDP_FDB_STATIC) {
		kc->n_static++;
		return;
	}
	if (v->flags & VXDP_FDB_EVPN) {
		kc->n_evpn++;
		return;
	}
	if (p)
		p->n_macs++;
	struct kc_vni *cv = kc_vni(kc, key->vni, true);
	if (cv)
		cv->n_macs++;
}

void kdp_ctl_adopt_done(struct kdp_ctl *kc)
{
	if (!kc || !kc->kept)
		return;
	unsigned removed = 0;
	for (unsigned i = 0; i < kc->n_kept; i++) {
		struct kc_kept *kp = &kc->kept[i];
		if (kp->claimed)
			continue;
		char name[IF_NAMESIZE];
		bool ours = (kp->flags & VXDP_PORT_OURS) && if_indextoname(kp->ifindex, name);
		kdp_port_del(kc->k, kp->ifindex);
		if (ours)
			rtnl_link_delete(-1, name);
		removed++;
	}
	struct kc_vni_list *vl = calloc(1, sizeof(*vl));
	struct kc_recount *r = calloc(1, sizeof(*r));
	if (vl && r) {
		kdp_vni_each(kc->k, kc_vni_collect, vl);
		for (unsigned i = 0; i < vl->n; i++)
			if (!kc_vni_configured(kc, vl->vni[i]))
				kdp_vni_del(kc->k, vl->vni[i]);
		for (unsigned i = 0; i < KC_MAX_VNIS; i++)
			kc->vnis[i].n_macs = 0;
		for (unsigned i = 0; i < KC_MAX_PORTS; i++)
			kc->ports[i].n_macs = 0;
		kc->n_static = kc->n_evpn = 0;
		r->kc = kc;
		do { /* entries that go, 256 a pass; then count what stays */
			r->n = 0;
			kdp_fdb_dump(kc->k, kc_recount_one, r);
			for (unsigned i = 0; i < r->n; i++)
				kdp_fdb_del(kc->k, r->keys[i].vni, r->keys[i].mac);
			if (r->n) {
				for (unsigned i = 0; i < KC_MAX_VNIS; i++)
					kc->vnis[i].n_macs = 0;
				for (unsigned i = 0; i < KC_MAX_PORTS; i++)
					kc->ports[i].n_macs = 0;
				kc->n_static = kc->n_evpn = 0;
			}
		} while (r->n);
	}
	free(vl);
	free(r);
	VLOG_INFO("kdp", "kept state adopted: %u kept ports the configuration does not name removed", removed);
	free(kc->kept);
	kc->kept = NULL;
	kc->n_kept = 0;
}

