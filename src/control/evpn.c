/* evpn: zebra's entries on the shadow devices mirrored into the FDB and
 * the VNI table, and our local MACs written back (contract: evpn.h). */
#include "control/evpn_internal.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "control/vxd_internal.h"
#include "ctl/ctl_print.h"
#include "port/evpn_neigh.h"
#include "port/evpn_shadow.h"
#include "port/vxlan.h"
#include "util/vlog.h"

struct evpn_vni *evpn_of_port(const struct vxd *vxd, const char *name)
{
	if (!vxd->evpn)
		return NULL;
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (vxd->evpn->vnis[i].used && !strcmp(vxd->evpn->vnis[i].port, name))
			return &vxd->evpn->vnis[i];
	return NULL;
}

/* ---- the datapath's FDB and flood lists ---------------------------------------
 * With the kernel datapath (vxd->kdp) every vxlan port is its, and so are
 * the FDB entries EVPN fills (its dpif: control/kdp_ports.h, "The kernel
 * datapath's dpif") and its flood lists (dpif port_flood_vteps on the
 * port's devport id); otherwise the userspace datapath's FDB (its dpif)
 * and VNI table.  Both through dp/dpif.h (vxd_fdb_dpif, vxd_devport_dpif). */

static bool ev_lookup(struct vxd *vxd, const struct evpn_vni *v, const uint8_t mac[6], struct fdb_dst *cur)
{
	struct dpif *dp = vxd_fdb_dpif(vxd);
	return dp->class->fdb_lookup(dp, v->vni, mac, cur);
}

static int ev_add(struct vxd *vxd, const struct evpn_vni *v, const uint8_t mac[6], const uint8_t vtep[4])
{
	struct dpif *dp = vxd_fdb_dpif(vxd);
	struct fdb_dst d = fdb_dst_vtep4(v->port_id, vtep);
	return dp->class->fdb_add(dp, DPIF_FDB_EVPN, v->vni, mac, &d);
}

static int ev_del(struct vxd *vxd, const struct evpn_vni *v, const uint8_t mac[6])
{
	struct dpif *dp = vxd_fdb_dpif(vxd);
	return dp->class->fdb_del(dp, DPIF_FDB_EVPN, v->vni, mac);
}

void ev_walk(const struct vxd *vxd, uint32_t vni, fdb_dump_cb *cb, void *ctx)
{
	struct dpif *dp = vxd_fdb_dpif(vxd);
	dp->class->fdb_dump(dp, vni, cb, ctx);
}

/* The port is still there (its removal clears the slot; this guards the
 * events of the moment in between). */
static bool ev_port_live(const struct vxd *vxd, const struct evpn_vni *v)
{
	return vxd_devport_by_name(vxd, v->port) || (v->port_id < VXD_MAX_PORTS && vxd->ports[v->port_id]);
}

static enum evpn_dev_role evpn_lookup(void *aux, int ifindex, uint32_t *vni)
{
	struct vxd_evpn *ev = aux;
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++) {
		struct evpn_vni *v = &ev->vnis[i];
		if (!v->used)
			continue;
		*vni = v->vni;
		if (ifindex == v->sh.vx_ifindex)
			return EVPN_DEV_VXLAN;
		if (ifindex == v->sh.port_ifindex)
			return EVPN_DEV_PORT;
	}
	return EVPN_DEV_NONE;
}

static struct evpn_vni *evpn_of_vni(struct vxd_evpn *ev, uint32_t vni)
{
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (ev->vnis[i].used && ev->vnis[i].vni == vni)
			return &ev->vnis[i];
	return NULL;
}

static int mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

/* qsort and bsearch want a base even for no elements. */
static bool mac_in(const struct evpn_mac *set, unsigned n, const uint8_t mac[6])
{
	return n && bsearch(mac, set, n, sizeof(*set), mac_cmp);
}

static void mac_sort(struct evpn_mac *set, unsigned n)
{
	if (n)
		qsort(set, n, sizeof(*set), mac_cmp);
}

/* ---- flood sets -------------------------------------------------------------- */

int vtep_find(uint8_t (*list)[4], unsigned n, const uint8_t vtep[4])
{
	for (unsigned i = 0; i < n; i++)
		if (!memcmp(list[i], vtep, 4))
			return (int)i;
	return -1;
}

/* Gives every EVPN port that datapath dp serves itself its flood VTEPs as
 * they are now (the port's static remotes stay whatever EVPN says). */
static void evpn_publish_devports(struct vxd *vxd, struct dpif *dp)
{
	struct vxd_evpn *ev = vxd->evpn;
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++) {
		struct evpn_vni *v = &ev->vnis[k];
		const struct vxd_devport *port = v->used ? vxd_devport_by_name(vxd, v->port) : NULL;
		if (!port)
			continue;
		struct dpif_ip vteps[EVPN_MAX_VTEPS];
		for (unsigned i = 0; i < v->n_vteps; i++) {
			vteps[i] = (struct dpif_ip){ .family = AF_INET };
			memcpy(vteps[i].bytes, v->vteps[i], 4);
		}
		int err = dp->class->port_flood_vteps(dp, port->id, vteps, v->n_vteps);
		if (err < 0 && err != -ENOENT && !v->flood_errors++)
			VLOG_WARN("evpn", "VNI %u: the %s datapath's flood list keeps its VTEPs before this change "
				  "(%u from EVPN: %s)", v->vni, dp->class->name, v->n_vteps, strerror(-err));
	}
}

/* Publishes the VNI table with every EVPN port's flood VTEPs as they are
 * now: to the datapath that serves the vxlan ports itself when one runs,
 * else in the userspace datapath's VNI table. */
static void evpn_publish(struct vxd *vxd)
{
	struct vxd_evpn *ev = vxd->evpn;
	ev->vnis_dirty = false;
	struct dpif *dev_dp = vxd_devport_dpif(vxd);
	if (dev_dp && dev_dp->class->port_flood_vteps) {
		evpn_publish_devports(vxd, dev_dp);
		return;
	}
	struct vni_table *t;
	if (vni_table_clone(vxd_view(vxd)->vnis, &t) < 0) {
		VLOG_ERR("evpn", "cannot copy the VNI table: flood sets not updated");
		ev->vnis_dirty = true;
		return;
	}
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++) {
		struct evpn_vni *v = &ev->vnis[k];
		if (!v->used)
			continue;
		struct port *port = vxd->ports[v->port_id];
		const struct vni *cur = vni_lookup(t, v->vni);
		if (!port || !cur)
			continue;
		vni_set_evpn(t, v->vni, !v->going);
		/* Out: VTEPs of this port that are neither static nor EVPN's. */
		struct fdb_dst gone[VNI_MAX_VTEPS];
		unsigned n_gone = 0;
		for (unsigned i = 0; i < cur->n_vteps; i++) {
			const struct fdb_dst *d = &cur->vteps[i];
			if (d->port != v->port_id || vxlan_port_is_remote(port, d->family, d->addr))
				continue;
			if (d->family != 4 || vtep_find(v->vteps, v->n_vteps, d->addr) < 0)
				gone[n_gone++] = *d;
		}
		for (unsigned i = 0; i < n_gone; i++)
			vni_del_vtep(t, v->vni, &gone[i]);
		for (unsigned i = 0; i < v->n_vteps; i++) {
			struct fdb_dst d = fdb_dst_vtep4(v->port_id, v->vteps[i]);
			int err = vni_add_vtep(t, v->vni, &d);
			if (err < 0 && err != -EEXIST)
				VLOG_WARN("evpn", "VNI %u: flood VTEP not added (%s)", v->vni, strerror(-err));
		}
	}
	if (vxd_publish(vxd, t) < 0) {
		vni_table_destroy(t);
		ev->vnis_dirty = true;
	}
}

static void evpn_flood(struct vxd_evpn *ev, struct evpn_vni *v, const struct evpn_neigh *n)
{
	int at = vtep_find(v->vteps, v->n_vteps, n->vtep);
	if (ev->reading == EVPN_READ_DUMP && !n->deleted && vtep_find(v->seen_vteps, v->n_seen_vteps, n->vtep) < 0 &&
	    v->n_seen_vteps < EVPN_MAX_VTEPS)
		memcpy(v->seen_vteps[v->n_seen_vteps++], n->vtep, 4);
	if (n->deleted && at >= 0) {
		memmove(v->vteps[at], v->vteps[at + 1], (v->n_vteps - (unsigned)at - 1) * 4);
		v->n_vteps--;
		v->flood_dels++;
		ev->vnis_dirty = true;
	} else if (!n->deleted && at < 0 && v->n_vteps < EVPN_MAX_VTEPS) {
		memcpy(v->vteps[v->n_vteps++], n->vtep, 4);
		v->flood_adds++;
		ev->vnis_dirty = true;
	}
}

/* ---- moves ------------------------------------------------------------------ */

static struct evpn_flap *evpn_flap_slot(struct evpn_vni *v, const uint8_t mac[6], bool make)
{
	struct evpn_flap *oldest = &v->flaps[0];
	for (unsigned i = 0; i < EVPN_FLAP_SLOTS; i++) {
		struct evpn_flap *f = &v->flaps[i];
		if (f->used && !memcmp(f->mac, mac, 6))
			return f;
		if (!f->used || (oldest->used && f->last_ns < oldest->last_ns))
			oldest = f;
	}
	if (!make)
		return NULL;
	memset(oldest, 0, sizeof(*oldest));
	oldest->used = true;
	memcpy(oldest->mac, mac, 6);
	return oldest;
}

/* `mac` moved: to remote VTEP `vtep`, or (vtep NULL) to a local port. */
static void evpn_moved(struct vxd *vxd, struct evpn_vni *v, const uint8_t mac[6], const uint8_t *vtep)
{
	struct evpn_flap *f = evpn_flap_slot(v, mac, true);
	uint64_t now = vxd_clock(vxd);
	if (!f->moves || now - f->first_ns > EVPN_DAD_WINDOW_NS) {
		f->moves = 0;
		f->first_ns = now;
	}
	f->moves++;
	f->last_ns = now;
	f->local = !vtep;
	if (vtep)
		memcpy(f->vtep, vtep, 4);
	v->moves++;
}

/* ---- remote MACs ------------------------------------------------------------- */

/* `mac` is not on our shadow port any more (zebra moved the bridge's
 * entry): not ours to delete, and advertised anew when it is local again. */
static bool evpn_local_forget(struct evpn_vni *v, const uint8_t mac[6])
{
	struct evpn_mac *m = v->n_local ? bsearch(mac, v->local, v->n_local, sizeof(*m), mac_cmp) : NULL;
	if (!m)
		return false;
	unsigned at = (unsigned)(m - v->local);
	memmove(&v->local[at], &v->local[at + 1], (v->n_local - at - 1) * sizeof(*m));
	v->n_local--;
	return true;
}

/* Zebra moved a MAC we advertise to the shadow vxlan: a remote route won
 * (RFC 7432 mobility, a higher sequence number).  When zebra's vxlan entry
 * of it was left from before the MAC moved here, that entry does not
 * change and no event names the VTEP: the bridge's entry moving from our
 * port is all there is.  So the MAC is forgotten as ours and the shadow
 * vxlan's entry of that MAC is read (evpn_resolve_taken: one netlink get
 * per MAC, a dump of the whole FDB only past EVPN_TAKEN_MAX of them) for
 * the VTEP (evpn_remote_mac installs it over our local entry, a move);
 * the next frame from the local port learns it here again, the sync
 * advertises it, and zebra counts that move too. */
static void evpn_local_taken(struct vxd_evpn *ev, struct evpn_vni *v, const uint8_t mac[6])
{
	if (!evpn_local_forget(v, mac))
		return; /* a remote MAC's copy, or one the vxlan's event moved */
	if (v->n_taken < EVPN_TAKEN_MAX) {
		memcpy(v->taken[v->n_taken++].mac, mac, 6);
		ev->taken_due = true;
	} else {
		v->taken_overflow = true;
		ev->resync_due = true;
	}
}

static bool evpn_was_taken(const struct evpn_vni *v, const uint8_t mac[6])
{
	for (unsigned i = 0; i < v->n_taken; i++)
		if (!memcmp(v->taken[i].mac, mac, 6))
			return true;
	return v->taken_overflow && !mac_in(v->local, v->n_local, mac);
}

static void evpn_remote_mac(struct vxd *vxd, struct evpn_vni *v, const struct evpn_neigh *n)
{
	struct fdb_dst d = fdb_dst_vtep4(v->port_id, n->vtep);
	if (n->deleted) {
		/* Only if it still points there: a move's add may have come
		 * first. */
		struct fdb_dst cur;
		if (ev_lookup(vxd, v, n->mac, &cur) && fdb_dst_equal(&cur, &d) && ev_del(vxd, v, n->mac) == 0)
			v->remote_dels++;
		return;
	}
	bool as_is = vxd->evpn->reading != EVPN_READ_LIVE;
	if (vxd->evpn->reading == EVPN_READ_DUMP) {
		if (v->n_seen_macs == v->cap_seen_macs) {
			unsigned cap = v->cap_seen_macs ? 2 * v->cap_seen_macs : 256;
			struct evpn_mac *m = realloc(v->seen_macs, cap * sizeof(*m));
			if (m) {
				v->seen_macs = m;
				v->cap_seen_macs = cap;
			}
		}
		if (v->n_seen_macs < v->cap_seen_macs)
			memcpy(v->seen_macs[v->n_seen_macs++].mac, n->mac, 6);
	}
	/* A dump shows zebra's entry of a MAC that moved here (zebra leaves
	 * it): the local entry stands, unless zebra took the MAC off our port
	 * since (evpn_local_taken).  A live event is zebra moving the MAC
	 * away (a higher sequence elsewhere), and wins. */
	struct fdb_dst cur;
	bool had = ev_lookup(vxd, v, n->mac, &cur);
	bool was_local = had && cur.type == FDB_DST_PORT;
	bool taken = as_is && was_local && evpn_was_taken(v, n->mac);
	if (as_is && was_local && !taken)
		return;
	int err = ev_add(vxd, v, n->mac, n->vtep);
	if (err == 0 && had && (taken || !as_is) && !fdb_dst_equal(&cur, &d))
		evpn_moved(vxd, v, n->mac, n->vtep);
	if (err == 0 && was_local)
		evpn_local_forget(v, n->mac); /* zebra's now: no delete of ours to send */
	if (err == 0)
		v->remote_adds++;
	else if (err == -EEXIST)
		v->conflicts++;
	else if (err == -ENOSPC && v->refused++)
		; /* said once; counted in port show and stats */
	else
		VLOG_WARN("evpn", "VNI %u: remote MAC not installed (%s)%s", v->vni, strerror(-err),
			  err == -ENOSPC ? ": the FDB's EVPN entries are full (vxswitchd --fdb-size)" : "");
}

static void evpn_event(void *aux, const struct evpn_neigh *n)
{
	struct vxd *vxd = aux;
	struct vxd_evpn *ev = vxd->evpn;
	if (n->kind == EVPN_NEIGH_IGNORED) {
		/* Others' devices and the bridge's copies are the normal case;
		 * the rest is worth counting. */
		ev->ignored[n->why]++;
		return;
	}
	struct evpn_vni *v = evpn_of_vni(ev, n->vni);
	if (!v || !ev_port_live(vxd, v))
		return;
	if (n->kind == EVPN_NEIGH_FLOOD)
		evpn_flood(ev, v, n);
	else if (n->kind == EVPN_NEIGH_REMOTE_MAC)
		evpn_remote_mac(vxd, v, n);
	else if (n->kind == EVPN_NEIGH_BRIDGE_REMOTE && !n->deleted && ev->reading == EVPN_READ_LIVE)
		evpn_local_taken(ev, v, n->mac);
	else if (n->kind == EVPN_NEIGH_LOCAL && ev->reading != EVPN_READ_LIVE && !n->deleted &&
		 !mac_in(v->local, v->n_local, n->mac))
		evpn_nl_local(false, v->sh.port_ifindex, n->mac); /* not ours (any more) */
}

/* ---- resync ------------------------------------------------------------------ */

struct evpn_stale {
	struct evpn_mac *macs;
	unsigned n, cap;
};

static int evpn_collect_stale(const struct fdb_entry_info *e, void *ctx)
{
	struct evpn_stale *s = ctx;
	if (!e->evpn)
		return 0;
	if (s->n == s->cap) {
		unsigned cap = s->cap ? 2 * s->cap : 256;
		struct evpn_mac *m = realloc(s->macs, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->macs = m;
		s->cap = cap;
	}
	memcpy(s->macs[s->n++].mac, e->mac, 6);
	return 0;
}

static void evpn_dump_chunk(void *aux, const void *buf, size_t len)
{
	struct vxd *vxd = aux;
	evpn_neigh_parse_all(buf, len, evpn_lookup, vxd->evpn, evpn_event, vxd);
}

/* Each taken MAC's entry on its VNI's shadow vxlan, read as a dump's
 * entry would be (evpn_remote_mac then installs its VTEP over our local
 * entry); a failed get other than "no entry" leaves resync_due for the
 * caller's dump. */
static void evpn_resolve_taken(struct vxd *vxd)
{
	struct vxd_evpn *ev = vxd->evpn;
	ev->taken_due = false;
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++) {
		struct evpn_vni *v = &ev->vnis[k];
		for (unsigned i = 0; v->used && i < v->n_taken; i++) {
			ev->reading = EVPN_READ_GET;
			int err = evpn_nl_get(v->sh.vx_ifindex, v->taken[i].mac, evpn_dump_chunk, vxd);
			ev->reading = EVPN_READ_LIVE;
			ev->taken_gets++;
			if (err < 0 && err != -ENOENT) {
				VLOG_WARN("evpn", "VNI %u: cannot read a taken MAC's entry (%s): dumping the FDB",
					  v->vni, strerror(-err));
				ev->resync_due = true;
			}
		}
		if (!ev->resync_due)
			v->n_taken = 0;
	}
}

/* The whole FDB again: what it has is installed, the EVPN entries and
 * flood VTEPs it lacks are removed. */
static void evpn_resync(struct vxd *vxd)
{
	struct vxd_evpn *ev = vxd->evpn;
	ev->resyncs++;
	ev->reading = EVPN_READ_DUMP;
	ev->resync_due = ev->taken_due = false;
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++)
		ev->vnis[k].n_seen_vteps = ev->vnis[k].n_seen_macs = 0;
	int err = evpn_nl_dump(evpn_dump_chunk, vxd);
	ev->reading = EVPN_READ_LIVE;
	if (err < 0) {
		VLOG_ERR("evpn", "dump of the bridge FDB failed (%s): stale entries stay", strerror(-err));
		return;
	}
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++) {
		struct evpn_vni *v = &ev->vnis[k];
		if (!v->used)
			continue;
		for (unsigned i = 0; i < v->n_vteps;) {
			if (vtep_find(v->seen_vteps, v->n_seen_vteps, v->vteps[i]) >= 0) {
				i++;
				continue;
			}
			memmove(v->vteps[i], v->vteps[i + 1], (v->n_vteps - i - 1) * 4);
			v->n_vteps--;
			v->flood_dels++;
			ev->vnis_dirty = true;
		}
		v->n_taken = 0;
		v->taken_overflow = false;
		mac_sort(v->seen_macs, v->n_seen_macs);
		struct evpn_stale s = { 0 };
		ev_walk(vxd, v->vni, evpn_collect_stale, &s);
		for (unsigned i = 0; i < s.n; i++)
			if (!mac_in(v->seen_macs, v->n_seen_macs, s.macs[i].mac) && ev_del(vxd, v, s.macs[i].mac) == 0)
				v->remote_dels++;
		free(s.macs);
	}
	if (ev->vnis_dirty)
		evpn_publish(vxd);
}

/* ---- local MACs -------------------------------------------------------------- */

struct evpn_locals {
	struct evpn_mac *macs;
	unsigned n;
};

/* Every EVPN VNI's local MACs in one walk of the FDB: a walk visits every
 * bucket of the table (fdb_dump), which is what an idle vxswitchd pays
 * each tick, so once per tick and not once per VNI. */
struct evpn_locals_all {
	const struct vxd_evpn *ev;
	struct evpn_locals per[VXD_EVPN_MAX_VNIS];
};

static int evpn_collect_local(const struct fdb_entry_info *e, void *ctx)
{
	struct evpn_locals_all *a = ctx;
	if (e->is_static || e->dst.type != FDB_DST_PORT)
		return 0;
	for (unsigned k = 0; k < VXD_EVPN_MAX_VNIS; k++) {
		struct evpn_locals *l = &a->per[k];
		if (!a->ev->vnis[k].used || a->ev->vnis[k].vni != e->vni || !l->macs)
			continue;
		if (l->n < VXD_EVPN_MAX_LOCAL)
			memcpy(l->macs[l->n++].mac, e->mac, 6);
		break;
	}
	return 0;
}

/* Our FDB's local MACs of the VNI (`now`, taken over) against what the
 * shadow port has: a merge of two sorted lists, adding and deleting the
 * difference. */
static void evpn_sync_local(struct vxd *vxd, struct evpn_vni *v, struct evpn_locals now)
{
	mac_sort(now.macs, now.n);
	unsigned i = 0, j = 0, dels = 0;
	while (i < now.n || j < v->n_local) {
		int c = i == now.n ? 1 : j == v->n_local ? -1 : mac_cmp(now.macs[i].mac, v->local[j].mac);
		if (c == 0) {
			i++, j++;
			continue;
		}
		const uint8_t *mac = c < 0 ? now.macs[i++].mac : v->local[j++].mac;
		int err = evpn_nl_local(c < 0, v->sh.port_ifindex, mac);
		if (err < 0) {
			v->nl_errors++;
			VLOG_WARN("evpn", "VNI %u: local MAC %s on %s failed (%s)", v->vni, c < 0 ? "add" : "delete",
				  v->sh.port, strerror(-err));
		} else if (c < 0) {
			v->local_adds++;
			/* Here now, and it had moved before: another move (the
			 * first move here of a MAC is not known to be one). */
			if (evpn_flap_slot(v, mac, false))
				evpn_moved(vxd, v, mac, NULL);
		} else {
			v->local_dels++;
			dels++;
		}
	}
	free(v->local);
	v->local = now.macs;
	v->n_local = now.n;
	/* A MAC that was remote before it was local here still has zebra's
	 * entry on the shadow vxlan (zebra does not take it away when the MAC
	 * moves here, and installing it again changes nothing, so no event
	 * comes): once the MAC is not local any more, read it back. */
	if (dels) {
		vxd->evpn->resyncs_local_gone++;
		evpn_resync(vxd);
	}
}

/* ---- life cycle --------------------------------------------------------------- */

void vxd_evpn_reap(void)
{
	int n = evpn_shadow_reap();
	if (n > 0)
		VLOG_INFO("evpn", "deleted %d shadow devices a previous vxswitchd left", n);
}

static int evpn_open(struct vxd *vxd)
{
	struct vxd_evpn *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->fd = evpn_nl_watch_open();
	ev->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int err = ev->fd < 0 ? ev->fd : ev->timer_fd < 0 ? -errno : 0;
	struct itimerspec its = { .it_interval = { 0, EVPN_LOCAL_SYNC_MS * 1000000L },
				  .it_value = { 0, EVPN_LOCAL_SYNC_MS * 1000000L } };
	struct epoll_event e1 = { .events = EPOLLIN, .data.u32 = VXD_EVPN_SRC };
	struct epoll_event e2 = { .events = EPOLLIN, .data.u32 = VXD_EVPN_TIMER_SRC };
	if (err == 0 && (timerfd_settime(ev->timer_fd, 0, &its, NULL) < 0 ||
			 epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, ev->fd, &e1) < 0 ||
			 epoll_ctl(vxd->epfd, EPOLL_CTL_ADD, ev->timer_fd, &e2) < 0))
		err = -errno;
	if (err < 0) {
		if (ev->fd >= 0)
			close(ev->fd);
		if (ev->timer_fd >= 0)
			close(ev->timer_fd);
		free(ev);
		return err;
	}
	vxd->evpn = ev;
	return 0;
}

static int evpn_port_added(struct vxd *vxd, const struct ctl_port_add *pa, uint16_t id, struct ctl_err *err)
{
	if (!vxd->evpn) {
		int ret = evpn_open(vxd);
		if (ret < 0)
			return vxd_refuse(err, ret, "port %s: evpn: cannot open the netlink socket (%s)", pa->name,
					  strerror(-ret));
	}
	struct vxd_evpn *ev = vxd->evpn;
	struct evpn_vni *v = NULL;
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS && !v; i++)
		if (!ev->vnis[i].used)
			v = &ev->vnis[i];
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (ev->vnis[i].used && ev->vnis[i].vni == pa->vni)
			return vxd_refuse(err, -EEXIST, "port %s: evpn: VNI %u has an EVPN port already", pa->name,
					  pa->vni);
	if (!v)
		return vxd_refuse(err, -ENOSPC, "port %s: evpn: at most %d EVPN ports", pa->name, VXD_EVPN_MAX_VNIS);
	memset(v, 0, sizeof(*v));
	int ret = evpn_shadow_create(pa->vni, pa->local.bytes, &v->sh);
	if (ret < 0)
		return vxd_refuse(err, ret, "port %s: evpn: cannot create the shadow devices of VNI %u (%s)", pa->name,
				  pa->vni, strerror(-ret));
	v->used = true;
	v->vni = pa->vni;
	v->port_id = id;
	snprintf(v->port, sizeof(v->port), "%s", pa->name);
	VLOG_INFO("evpn", "VNI %u: shadow %s + %s + %s for zebra", v->vni, v->sh.br, v->sh.vx, v->sh.port);
	ev->vnis_dirty = true; /* the VNI's evpn mark, for the userspace datapath */
	evpn_resync(vxd);
	return 0;
}

int vxd_evpn_port_added(struct vxd *vxd, uint16_t id, struct ctl_err *err)
{
	return evpn_port_added(vxd, &vxd->port_cfg[id], id, err);
}

int vxd_evpn_kport_added(struct vxd *vxd, const struct ctl_port_add *pa, struct ctl_err *err)
{
	const struct vxd_devport *d = vxd_devport_by_name(vxd, pa->name);
	if (!d)
		return vxd_refuse(err, -ENOENT, "port %s: evpn: not a port of a datapath's own", pa->name);
	return evpn_port_added(vxd, pa, d->id, err);
}

void vxd_evpn_port_removed(struct vxd *vxd, const char *name)
{
	struct evpn_vni *v = evpn_of_port(vxd, name);
	if (!v)
		return;
	v->n_vteps = 0;
	v->going = true;
	evpn_publish(vxd);
	/* The EVPN entries go with the port's FDB entries (ports.c). */
	evpn_shadow_destroy(&v->sh);
	free(v->local);
	free(v->seen_macs);
	memset(v, 0, sizeof(*v));
}

static void evpn_read(struct vxd *vxd)
{
	struct vxd_evpn *ev = vxd->evpn;
	for (int rounds = 0; rounds < 64; rounds++) {
		int n = evpn_nl_watch_read(ev->fd, ev->buf, sizeof(ev->buf));
		if (n == -ENOBUFS) {
			ev->enobufs++;
			VLOG_WARN("evpn", "netlink overflow: dumping the FDB again");
			/* Drain what is queued: the dump covers it. */
			while (evpn_nl_watch_read(ev->fd, ev->buf, sizeof(ev->buf)) > 0)
				;
			evpn_resync(vxd);
			return;
		}
		if (n <= 0)
			break;
		evpn_neigh_parse_all(ev->buf, (size_t)n, evpn_lookup, ev, evpn_event, vxd);
	}
	if (ev->taken_due && !ev->resync_due)
		evpn_resolve_taken(vxd);
	if (ev->resync_due)
		evpn_resync(vxd);
	if (ev->vnis_dirty)
		evpn_publish(vxd);
}

void vxd_evpn_input(struct vxd *vxd, uint32_t src)
{
	struct vxd_evpn *ev = vxd->evpn;
	if (!ev)
		return;
	if (src == VXD_EVPN_SRC) {
		evpn_read(vxd);
		return;
	}
	uint64_t ticks;
	if (read(ev->timer_fd, &ticks, sizeof(ticks)) < 0) {
		/* EAGAIN */
	}
	struct evpn_locals_all *a = calloc(1, sizeof(*a));
	if (!a)
		return;
	a->ev = ev;
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (ev->vnis[i].used && ev_port_live(vxd, &ev->vnis[i]))
			a->per[i].macs = malloc(VXD_EVPN_MAX_LOCAL * sizeof(struct evpn_mac));
	ev_walk(vxd, FDB_VNI_ANY, evpn_collect_local, a);
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (a->per[i].macs)
			evpn_sync_local(vxd, &ev->vnis[i], a->per[i]);
	free(a);
	if (ev->vnis_dirty)
		evpn_publish(vxd);
}

void vxd_evpn_close(struct vxd *vxd)
{
	struct vxd_evpn *ev = vxd->evpn;
	if (!ev)
		return;
	for (unsigned i = 0; i < VXD_EVPN_MAX_VNIS; i++)
		if (ev->vnis[i].used) {
			evpn_shadow_destroy(&ev->vnis[i].sh);
			free(ev->vnis[i].local);
			free(ev->vnis[i].seen_macs);
		}
	close(ev->fd);
	close(ev->timer_fd);
	free(ev);
	vxd->evpn = NULL;
}
