#include "control/kdp_ports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"

#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_link.h"
#include "port/ethtool.h"
#include "port/rtnl.h"
#include "util/vlog.h"

/* Defined in kdp_ports_rules.c. */
void kc_rules_open(struct kdp_ctl *kc);
uint16_t kc_id(const struct kdp_ctl *kc, const struct kc_port *p);
int kc_rules_name_port(struct kdp_ctl *kc, const struct kc_port *p, struct ctl_err *err);

static const char *const hist_names[VXDP_HIST_BUCKETS] = {
	"<1.5K", "1.5K-8K", "8K-16K", "16K-32K", "32K-64K", ">=64K",
};

static const char *const drop_names[VXDP_DROP_COUNT] = {
#define KC_DROP_NAME(n, s) s,
	VXDP_DROP_REASONS(KC_DROP_NAME)
#undef KC_DROP_NAME
};

int kc_refuse(struct ctl_err *err, int ret, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

int kdp_ctl_open(uint16_t dstport, struct kdp_ctl **out, char *why, size_t why_len)
{
	struct kdp_ctl *kc = calloc(1, sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	kc->dstport = dstport ? dstport : CTL_VXLAN_DEFAULT_DSTPORT;
	struct kdp_opts o = { .dstport = kc->dstport };
	int err = kdp_open(&o, &kc->k, why, (unsigned)why_len);
	if (err < 0) {
		free(kc);
		return err;
	}
	kc->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN };
	if (kc->epfd < 0 || epoll_ctl(kc->epfd, EPOLL_CTL_ADD, kdp_upcall_fd(kc->k), &ev) < 0) {
		err = -errno;
		snprintf(why, why_len, "cannot poll the upcall ring: %s", strerror(errno));
		kdp_ctl_close(kc);
		return err;
	}
	kc_rules_open(kc);
	*out = kc;
	return 0;
}

static void kc_port_drop(struct kdp_ctl *kc, struct kc_port *p)
{
	if (p->ifindex)
		kdp_port_del(kc->k, p->ifindex);
	if (p->made_veth)
		rtnl_link_delete(-1, p->cfg.name);
	memset(p, 0, sizeof(*p));
}

void kdp_ctl_close(struct kdp_ctl *kc)
{
	if (!kc)
		return;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used)
			kc_port_drop(kc, &kc->ports[i]);
	kdp_rules_ctl_close(kc->kr);
	kdp_close(kc->k);
	if (kc->epfd > 0)
		close(kc->epfd);
	free(kc);
}

int kdp_ctl_fd(struct kdp_ctl *kc)
{
	return kc->epfd;
}

struct kc_port *kc_by_name(struct kdp_ctl *kc, const char *name)
{
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used && !strcmp(kc->ports[i].cfg.name, name))
			return &kc->ports[i];
	return NULL;
}

struct kc_port *kc_by_ifindex(struct kdp_ctl *kc, uint32_t ifindex)
{
	for (unsigned i = 0; ifindex && i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used && kc->ports[i].ifindex == ifindex)
			return &kc->ports[i];
	return NULL;
}

/* The vxlan port of `vni` naming remote `addr` (family by VXDP_FDB_V6). */
static struct kc_port *kc_vtep(struct kdp_ctl *kc, uint32_t vni, uint32_t flags, const uint8_t *addr)
{
	sa_family_t fam = (flags & VXDP_FDB_V6) ? AF_INET6 : AF_INET;
	size_t len = fam == AF_INET6 ? 16 : 4;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		struct kc_port *p = &kc->ports[i];
		if (!p->used || p->cfg.type != CTL_PORT_VXLAN || p->cfg.vni != vni)
			continue;
		for (unsigned r = 0; r < p->cfg.n_remotes; r++)
			if (p->cfg.remotes[r].family == fam && !memcmp(p->cfg.remotes[r].bytes, addr, len))
				return p;
	}
	return NULL;
}

static struct kc_vni *kc_vni(struct kdp_ctl *kc, uint32_t vni, bool make)
{
	struct kc_vni *free_slot = NULL;
	for (unsigned i = 0; i < KC_MAX_VNIS; i++) {
		if (kc->vnis[i].used && kc->vnis[i].vni == vni)
			return &kc->vnis[i];
		if (!free_slot && !kc->vnis[i].used)
			free_slot = &kc->vnis[i];
	}
	if (!make || !free_slot)
		return NULL;
	*free_slot = (struct kc_vni){ .used = true, .vni = vni };
	return free_slot;
}

/* The VNI's flood list: its local ports, then every remote of its vxlan
 * ports (once each); no port left: the VNI goes. */
static int kc_vni_rebuild(struct kdp_ctl *kc, uint32_t vni)
{
	struct vxdp_flood_ent fl[VXDP_FLOOD_MAX];
	unsigned n = 0;
	bool any = false;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (!p->used || p->cfg.vni != vni)
			continue;
		any = true;
		if (p->cfg.type != CTL_PORT_VXLAN) {
			if (n == VXDP_FLOOD_MAX)
				return -E2BIG;
			fl[n++] = (struct vxdp_flood_ent){
				.ifindex = p->ifindex,
				.flags = (p->flags & VXDP_PORT_VETH) ? VXDP_FDB_VETH : 0,
			};
			continue;
		}
		for (unsigned r = 0; r < p->cfg.n_remotes; r++) {
			const struct ctl_ip *ip = &p->cfg.remotes[r];
			struct vxdp_flood_ent e = { .flags = VXDP_FDB_REMOTE | (ip->family == AF_INET6 ? VXDP_FDB_V6 : 0) };
			memcpy(e.remote, ip->bytes, ip->family == AF_INET6 ? 16 : 4);
			bool dup = false;
			for (unsigned j = 0; j < n && !dup; j++)
				dup = !memcmp(&fl[j], &e, sizeof(e));
			if (dup)
				continue;
			if (n == VXDP_FLOOD_MAX)
				return -E2BIG;
			fl[n++] = e;
		}
	}
	if (!any) {
		int err = kdp_vni_del(kc->k, vni);
		return err == -ENOENT ? 0 : err;
	}
	return kdp_vni_set(kc->k, vni, 0, 0, fl, n);
}

/* ---- FDB: learning, ageing, flushing ------------------------------------- */

static void kc_forget(struct kdp_ctl *kc, uint32_t vni, const struct vxdp_fdb_val *v)
{
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
		if (!p || p->cfg.vni != u->vni)
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
	if (had && (old.flags & VXDP_FDB_STATIC))
		goto refused;
	struct kc_vni *cv = kc_vni(kc, u->vni, true);
	if (!had && (!cv || (kc->fdb_max && cv->n_macs >= kc->fdb_max)))
		goto refused;
	if (p && p->cfg.max_macs && p->n_macs >= p->cfg.max_macs)
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
	struct vxdp_fdb_key keys[256];
	struct vxdp_fdb_val vals[256];
	unsigned n;
};

static void kc_sweep_one(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	struct kc_sweep *s = aux;
	if (s->n == 256 || (v->flags & VXDP_FDB_STATIC))
		return;
	bool go;
	if (s->ifindex)
		go = !(v->flags & VXDP_FDB_REMOTE) && v->ifindex == s->ifindex;
	else if (s->vxlan)
		go = (v->flags & VXDP_FDB_REMOTE) && key->vni == s->vxlan->cfg.vni;
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

void kdp_ctl_tick(struct kdp_ctl *kc, uint32_t fdb_max, uint32_t ageing_s)
{
	kc->fdb_max = fdb_max ? fdb_max : KC_FDB_MAX_DEFAULT;
	kdp_upcall_poll(kc->k, 0, kc_learn, kc);
	if (kc->kr)
		kdp_rules_tick(kc->kr);
	uint64_t now = kdp_now_ns();
	if (!ageing_s || now - kc->last_age_ns < 1000000000ull)
		return;
	kc->last_age_ns = now;
	struct kc_sweep *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->kc = kc;
	s->now = now;
	s->max_age = (uint64_t)ageing_s * 1000000000ull;
	kc->aged += kc_sweep(kc, s);
	free(s);
}

static void kc_flush_port(struct kdp_ctl *kc, const struct kc_port *p)
{
	struct kc_sweep *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->kc = kc;
	if (p->ifindex)
		s->ifindex = p->ifindex;
	else
		s->vxlan = p;
	kc_sweep(kc, s);
	free(s);
}

/* ---- ports ----------------------------------------------------------------- */

static int kc_add_netdev(struct kdp_ctl *kc, struct kc_port *p, struct ctl_err *err)
{
	const struct ctl_port_add *pa = &p->cfg;
	if (pa->type == CTL_PORT_AFPACKET) {
		if (pa->netns[0])
			return kc_refuse(err, -EOPNOTSUPP,
				      "port %s: the kernel datapath takes links in vxswitchd's own namespace only "
				      "(a redirect cannot reach %s in netns %s); use --datapath user", pa->name, pa->dev,
				      pa->netns);
		uint32_t idx = if_nametoindex(pa->dev);
		if (!idx)
			return kc_refuse(err, -ENODEV, "port %s: no link %s", pa->name, pa->dev);
		if (kc_by_ifindex(kc, idx))
			return kc_refuse(err, -EEXIST, "port %s: link %s is a port already", pa->name, pa->dev);
		p->ifindex = idx;
		char drv[32];
		if (ethtool_driver(pa->dev, drv, sizeof(drv)) == 0 && !strcmp(drv, "veth"))
			p->flags |= VXDP_PORT_VETH;
	} else {
		int ns = rtnl_netns_open(pa->netns);
		if (ns < 0)
			return kc_refuse(err, ns, "port %s: netns %s: %s", pa->name, pa->netns, strerror(-ns));
		int idx = kdp_link_veth_create(pa->name, pa->name, ns, pa->mtu);
		close(ns);
		if (idx < 0)
			return kc_refuse(err, idx, "port %s: cannot make the veth pair into netns %s: %s", pa->name,
				      pa->netns, strerror(-idx));
		p->ifindex = (uint32_t)idx;
		p->flags |= VXDP_PORT_VETH;
		p->made_veth = true;
	}
	struct kdp_port_opts po = { .vni = pa->vni, .flags = p->flags, .attach = true };
	int ret = kdp_port_add(kc->k, p->ifindex, &po);
	if (ret < 0) {
		p->ifindex = 0;
		return kc_refuse(err, ret, "port %s: cannot attach the kernel datapath's program: %s", pa->name,
			      strerror(-ret));
	}
	return 0;
}

static int kc_check_vxlan(const struct kdp_ctl *kc, const struct ctl_port_add *pa, struct ctl_err *err)
{
	if (pa->dstport != kc->dstport)
		return kc_refuse(err, -EOPNOTSUPP, "port %s: dstport %u: the kernel datapath's vxlan device listens on %u",
			      pa->name, pa->dstport, kc->dstport);
	if (pa->given & (CTL_PK_SRCPORT | CTL_PK_DF | CTL_PK_MTU) || !pa->udpcsum)
		return kc_refuse(err, -EOPNOTSUPP,
			      "port %s: srcport, df, mtu and udpcsum off are not honoured per port on the kernel "
			      "datapath (one shared vxlan device); use --datapath user", pa->name);
	if (pa->given & CTL_PK_EVPN)
		return kc_refuse(err, -EOPNOTSUPP,
			      "port %s: evpn: remote MACs and VTEPs from EVPN reach only the userspace datapath's "
			      "FDB so far; use --datapath user", pa->name);
	return 0;
}

static int kc_port_add(struct kdp_ctl *kc, const struct ctl_port_add *pa, struct ctl_print *out,
		       struct ctl_err *err)
{
	(void)out;
	if (pa->type == CTL_PORT_TAP)
		return kc_refuse(err, -EOPNOTSUPP,
			      "port %s: type tap needs the userspace datapath (vxswitchd --datapath user); the kernel "
			      "datapath takes afpacket, veth and vxlan ports (QEMU's own tap: type afpacket dev TAP)",
			      pa->name);
	const struct kc_port *have = kc_by_name(kc, pa->name);
	if (have && !memcmp(&have->cfg, pa, sizeof(*pa)))
		return 0; /* a reload's unchanged line */
	if (have)
		return kc_refuse(err, -EEXIST, "port %s: exists", pa->name);
	struct kc_port *p = NULL;
	for (unsigned i = 0; i < KC_MAX_PORTS && !p; i++)
		if (!kc->ports[i].used)
			p = &kc->ports[i];
	if (!p)
		return kc_refuse(err, -ENOSPC, "port %s: the kernel datapath has %d ports already", pa->name, KC_MAX_PORTS);
	int ret = pa->type == CTL_PORT_VXLAN ? kc_check_vxlan(kc, pa, err) : 0;
	if (ret < 0)
		return ret;
	*p = (struct kc_port){ .used = true, .cfg = *pa };
	if (pa->type != CTL_PORT_VXLAN && (ret = kc_add_netdev(kc, p, err)) < 0) {
		kc_port_drop(kc, p);
		return ret;
	}
	ret = kc_vni_rebuild(kc, pa->vni);
	if (ret < 0) {
		kc_port_drop(kc, p);
		kc_vni_rebuild(kc, pa->vni);
		return kc_refuse(err, ret, "port %s: VNI %u: %s", pa->name, pa->vni,
			      ret == -E2BIG ? "more than 32 ports and remote VTEPs to flood to" : strerror(-ret));
	}
	VLOG_INFO("port", "%s: added on the kernel datapath (%s, vni %u%s%s)", pa->name,
		  ctl_port_type_name(pa->type), pa->vni, p->ifindex ? ", ifindex " : "",
		  p->ifindex ? (p->flags & VXDP_PORT_VETH ? "veth" : "netdev") : "");
	return 0;
}

static int kc_port_del(struct kdp_ctl *kc, struct kc_port *p)
{
	uint32_t vni = p->cfg.vni;
	char name[CTL_NAME_SIZE];
	memcpy(name, p->cfg.name, sizeof(name));
	if (p->ifindex)
		kdp_port_del(kc->k, p->ifindex); /* no new entry can be learned behind it */
	kc_flush_port(kc, p);
	kc_port_drop(kc, p);
	int ret = kc_vni_rebuild(kc, vni);
	VLOG_INFO("port", "%s: removed from the kernel datapath", name);
	return ret;
}

/* ---- what the operator sees ------------------------------------------------ */

static void kc_print_remote(struct ctl_print *out, const char *key, const char *fmt, uint32_t flags,
			    const uint8_t *addr)
{
	struct ctl_ip ip = { .family = (flags & VXDP_FDB_V6) ? AF_INET6 : AF_INET };
	memcpy(ip.bytes, addr, ip.family == AF_INET6 ? 16 : 4);
	ctl_print_ip(out, CTL_PRINT_ANY, key, fmt, &ip);
}

void kdp_ctl_port_show(struct kdp_ctl *kc, struct ctl_print *out)
{
	const char *att = kdp_attach_kind(kc->k) == KDP_ATTACH_CLS_BPF ? "cls_bpf" : "tcx";
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (!p->used)
			continue;
		ctl_print_open_object(out, NULL);
		ctl_print_string(out, CTL_PRINT_ANY, "name", "%s", p->cfg.name);
		ctl_print_string(out, CTL_PRINT_ANY, "type", " type %s", ctl_port_type_name(p->cfg.type) + 5);
		ctl_print_uint(out, CTL_PRINT_ANY, "vni", " vni %" PRIu64, p->cfg.vni);
		ctl_print_string(out, CTL_PRINT_ANY, "datapath", " datapath %s", "kernel");
		if (p->cfg.type == CTL_PORT_AFPACKET)
			ctl_print_string(out, CTL_PRINT_ANY, "dev", " dev %s", p->cfg.dev);
		if (p->cfg.type == CTL_PORT_VETH)
			ctl_print_string(out, CTL_PRINT_ANY, "netns", " netns %s", p->cfg.netns);
		if (p->ifindex) {
			ctl_print_uint(out, CTL_PRINT_ANY, "ifindex", " ifindex %" PRIu64, p->ifindex);
			ctl_print_string(out, CTL_PRINT_ANY, "attach", " attach %s", att);
			ctl_print_string(out, CTL_PRINT_ANY, "deliver", " deliver %s",
					 p->flags & VXDP_PORT_VETH ? "redirect_peer" : "redirect");
			ctl_print_uint(out, CTL_PRINT_ANY, "macs", " macs %" PRIu64, p->n_macs);
			bool rules = kc->t && flower_table_port_has_rules(kc->t, kc_id(kc, p));
			ctl_print_string(out, CTL_PRINT_ANY, "rules", " rules %s", rules ? "kernel-cache" : "none");
		} else {
			ctl_print_open_array(out, "remotes");
			for (unsigned r = 0; r < p->cfg.n_remotes; r++)
				ctl_print_ip(out, CTL_PRINT_ANY, NULL, " remote %s", &p->cfg.remotes[r]);
			ctl_print_close_array(out);
			ctl_print_uint(out, CTL_PRINT_ANY, "dstport", " dstport %" PRIu64, kc->dstport);
		}
		ctl_print_nl(out);
		ctl_print_close_object(out);
	}
}

struct kc_fdb_print {
	struct kdp_ctl *kc;
	struct ctl_print *out;
	uint32_t vni;
	uint64_t now;
};

static void kc_fdb_print_one(void *aux, const struct vxdp_fdb_key *key, const struct vxdp_fdb_val *v)
{
	struct kc_fdb_print *fp = aux;
	if (fp->vni != UINT32_MAX && key->vni != fp->vni)
		return;
	const struct kc_port *p = (v->flags & VXDP_FDB_REMOTE) ? kc_vtep(fp->kc, key->vni, v->flags, v->remote)
							       : kc_by_ifindex(fp->kc, v->ifindex);
	ctl_print_open_object(fp->out, NULL);
	ctl_print_mac(fp->out, CTL_PRINT_ANY, "mac", "%s", key->mac);
	ctl_print_uint(fp->out, CTL_PRINT_ANY, "vni", " vni %" PRIu64, key->vni);
	ctl_print_string(fp->out, CTL_PRINT_ANY, "port", " port %s", p ? p->cfg.name : "?");
	if (v->flags & VXDP_FDB_REMOTE)
		kc_print_remote(fp->out, "remote", " remote %s", v->flags, v->remote);
	ctl_print_bool(fp->out, CTL_PRINT_JSON, "static", "%s", v->flags & VXDP_FDB_STATIC);
	uint64_t age = fp->now > v->last_used_ns ? fp->now - v->last_used_ns : 0;
	ctl_print_uint(fp->out, CTL_PRINT_ANY, "age_s", " age %" PRIu64 "s", age / 1000000000ull);
	ctl_print_string(fp->out, CTL_PRINT_ANY, "datapath", " datapath %s", "kernel");
	ctl_print_nl(fp->out);
	ctl_print_close_object(fp->out);
}

void kdp_ctl_fdb_show(struct kdp_ctl *kc, uint32_t vni, struct ctl_print *out)
{
	struct kc_fdb_print fp = { .kc = kc, .out = out, .vni = vni, .now = kdp_now_ns() };
	kdp_fdb_dump(kc->k, kc_fdb_print_one, &fp);
}

static void kc_print_counters(struct ctl_print *out, const struct vxdp_counters *c)
{
	ctl_print_uint(out, CTL_PRINT_ANY, "rx_frames", " rx %" PRIu64, c->rx_packets);
	ctl_print_uint(out, CTL_PRINT_ANY, "rx_bytes", " (%" PRIu64 " B)", c->rx_bytes);
	ctl_print_uint(out, CTL_PRINT_ANY, "tx_frames", " tx %" PRIu64, c->tx_packets);
	ctl_print_uint(out, CTL_PRINT_ANY, "tx_bytes", " (%" PRIu64 " B)", c->tx_bytes);
	ctl_print_uint(out, CTL_PRINT_ANY, "flooded", " flooded %" PRIu64, c->flood_packets);
	ctl_print_uint(out, CTL_PRINT_ANY, "upcalls", " upcalls %" PRIu64, c->upcalls);
	ctl_print_uint(out, CTL_PRINT_ANY, "upcall_drops", " upcall_drops %" PRIu64, c->upcall_drops);
	ctl_print_open_object(out, "drops");
	for (unsigned r = 0; r < VXDP_DROP_COUNT; r++) {
		char fmt[64];
		snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, drop_names[r]);
		ctl_print_uint(out, c->drops[r] ? CTL_PRINT_ANY : CTL_PRINT_JSON, drop_names[r], fmt, c->drops[r]);
	}
	ctl_print_close_object(out);
	ctl_print_open_object(out, "tx_size_hist");
	ctl_print_text(out, " tx sizes:");
	for (unsigned b = 0; b < VXDP_HIST_BUCKETS; b++) {
		char fmt[64];
		snprintf(fmt, sizeof(fmt), " %s %%" PRIu64, hist_names[b]);
		ctl_print_uint(out, CTL_PRINT_ANY, hist_names[b], fmt, c->hist_frames[b]);
	}
	ctl_print_close_object(out);
	ctl_print_open_object(out, "tx_size_hist_bytes");
	for (unsigned b = 0; b < VXDP_HIST_BUCKETS; b++)
		ctl_print_uint(out, CTL_PRINT_JSON, hist_names[b], "%" PRIu64, c->hist_bytes[b]);
	ctl_print_close_object(out);
}

static void kc_print_port_stats(struct kdp_ctl *kc, const char *name, uint32_t ifindex, struct ctl_print *out)
{
	struct vxdp_counters c;
	if (kdp_counters_read(kc->k, ifindex, &c) < 0)
		memset(&c, 0, sizeof(c));
	ctl_print_open_object(out, NULL);
	ctl_print_string(out, CTL_PRINT_ANY, "name", "%s", name);
	ctl_print_string(out, CTL_PRINT_ANY, "datapath", " datapath %s", "kernel");
	kc_print_counters(out, &c);
	if (kc->kr)
		kdp_rules_print_port(kc->kr, ifindex, out);
	ctl_print_nl(out);
	ctl_print_close_object(out);
}

static int kc_stats(struct kdp_ctl *kc, const struct ctl_port_ref *ref, struct ctl_print *out, struct ctl_err *err)
{
	const struct kc_port *p = ref->has_port ? kc_by_name(kc, ref->name) : NULL;
	if (ref->has_port && !p)
		return kc_refuse(err, -ENOENT, "port %s: no such port", ref->name);
	ctl_print_open_object(out, NULL);
	ctl_print_string(out, CTL_PRINT_ANY, "datapath", "datapath %s\n", "kernel");
	ctl_print_open_array(out, "ports");
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *q = &kc->ports[i];
		if (q->used && q->ifindex && (!p || p == q))
			kc_print_port_stats(kc, q->cfg.name, q->ifindex, out);
	}
	ctl_print_close_array(out);
	if (!p) {
		ctl_print_open_object(out, "vxlan_device");
		ctl_print_text(out, "vxlan device");
		struct vxdp_counters c;
		if (kdp_counters_read(kc->k, kdp_tun_ifindex(kc->k), &c) == 0)
			kc_print_counters(out, &c);
		ctl_print_nl(out);
		ctl_print_close_object(out);
		ctl_print_uint(out, CTL_PRINT_ANY, "learned", "learned %" PRIu64, kc->learned);
		ctl_print_uint(out, CTL_PRINT_ANY, "learn_refused", " learn_refused %" PRIu64, kc->learn_refused);
		ctl_print_uint(out, CTL_PRINT_ANY, "aged", " aged %" PRIu64 "\n", kc->aged);
		if (kc->kr)
			kdp_rules_print(kc->kr, out);
	}
	ctl_print_close_object(out);
	return 0;
}

bool kdp_ctl_execute(struct kdp_ctl *kc, const struct ctl_cmd *cmd, struct ctl_print *out,
		     struct ctl_err *err, int *ret)
{
	struct kc_port *p;
	switch (cmd->verb) {
	case CTL_PORT_ADD:
		*ret = kc_port_add(kc, &cmd->port_add, out, err);
		return true;
	case CTL_PORT_DEL:
		p = kc_by_name(kc, cmd->port.name);
		if (!p)
			return false;
		*ret = kc_rules_name_port(kc, p, err);
		if (*ret == 0)
			*ret = kc_port_del(kc, p);
		return true;
	case CTL_STATS:
		*ret = kc_stats(kc, &cmd->port, out, err);
		return true;
	case CTL_FDB_ADD:
	case CTL_FDB_DEL:
		*ret = kc_refuse(err, -EOPNOTSUPP, "fdb %s: static entries are not on the kernel datapath yet; "
			      "use --datapath user", cmd->verb == CTL_FDB_ADD ? "add" : "del");
		return true;
	default:
		return false;
	}
}
