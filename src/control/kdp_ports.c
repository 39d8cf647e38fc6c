#include "control/kdp_ports.h"
#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"
#include "switch/flower_hook.h"
#include "switch/flower_table.h"

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

#include "dp/kernel/kdp_link.h"
#include "port/ethtool.h"
#include "port/rtnl.h"
#include "util/vlog.h"

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

int kdp_ctl_open(uint16_t dstport, bool keep, const char *bpffs, struct kdp_ctl **out, char *why,
		 size_t why_len)
{
	if (!keep && kdp_kept_exists(bpffs, NULL)) {
		/* A kept run's programs would still switch beside ours. */
		VLOG_WARN("kdp", "removing the kernel datapath state a previous run kept (start with "
			  "--keep-datapath to adopt it)");
		kdp_ctl_cleanup(dstport, bpffs, NULL, 0);
	}
	struct kdp_ctl *kc = calloc(1, sizeof(*kc));
	if (!kc)
		return -ENOMEM;
	kc->up.class = &kdp_dpif_class;
	kc->ageing_ns = FDB_DEFAULT_AGEING_NS;
	kc->fdb_max = KC_FDB_MAX_DEFAULT;
	kc->dstport = dstport ? dstport : CTL_VXLAN_DEFAULT_DSTPORT;
	kc->keep = keep;
	struct kdp_opts o = { .dstport = kc->dstport, .keep = keep, .bpffs = bpffs };
	int err = kdp_open(&o, &kc->k, why, (unsigned)why_len);
	if (err < 0) {
		free(kc);
		return err;
	}
	if (kdp_adopted(kc->k))
		kc_adopt_begin(kc);
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
		rtnl_link_delete(-1, p->spec.name);
	memset(p, 0, sizeof(*p));
}

void kdp_ctl_close(struct kdp_ctl *kc)
{
	if (!kc)
		return;
	kc_capture_close(kc);
	for (unsigned i = 0; i < KC_MAX_PORTS && !kc->keep; i++)
		if (kc->ports[i].used)
			kc_port_drop(kc, &kc->ports[i]);
	kdp_rules_ctl_close(kc->kr);
	kdp_close(kc->k);
	if (kc->epfd > 0)
		close(kc->epfd);
	free(kc->kept);
	free(kc);
}

int kdp_ctl_fd(struct kdp_ctl *kc)
{
	return kc->epfd;
}

static const char *kc_type_of(const struct dpif_port_spec *spec, bool internal)
{
	if (internal)
		return "slowpath";
	return spec->type == DPIF_PORT_VXLAN ? "vxlan" : spec->type == DPIF_PORT_VETH ? "veth" : "afpacket";
}

const char *kc_type_name(const struct kc_port *p)
{
	return kc_type_of(&p->spec, p->internal);
}

struct kc_port *kc_by_name(struct kdp_ctl *kc, const char *name)
{
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used && !strcmp(kc->ports[i].spec.name, name))
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

struct kc_port *kc_vtep(struct kdp_ctl *kc, uint32_t vni, uint32_t flags, const uint8_t *addr)
{
	sa_family_t fam = (flags & VXDP_FDB_V6) ? AF_INET6 : AF_INET;
	size_t len = fam == AF_INET6 ? 16 : 4;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		struct kc_port *p = &kc->ports[i];
		if (!p->used || p->spec.type != DPIF_PORT_VXLAN || p->spec.vni != vni)
			continue;
		for (unsigned r = 0; r < p->spec.n_remotes; r++)
			if (p->spec.remotes[r].family == fam && !memcmp(p->spec.remotes[r].bytes, addr, len))
				return p;
		for (unsigned r = 0; r < p->n_evpn_vteps; r++)
			if (p->evpn_vteps[r].family == fam && !memcmp(p->evpn_vteps[r].bytes, addr, len))
				return p;
	}
	return NULL;
}

struct kc_vni *kc_vni(struct kdp_ctl *kc, uint32_t vni, bool make)
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

/* The outer-header settings of vni's vxlan ports (kc_check_vxlan keeps
 * them equal), as the program applies them per datagram, and whether the
 * VNI is EVPN's. */
struct kdp_vni_outer kc_vni_outer(const struct kdp_ctl *kc, uint32_t vni)
{
	struct kdp_vni_outer o = { 0 };
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (!p->used || p->spec.vni != vni || p->spec.type != DPIF_PORT_VXLAN)
			continue;
		if (!p->spec.udpcsum)
			o.flags |= VXDP_VNI_ZERO_CSUM;
		if (p->spec.df == DPIF_DF_SET && p->spec.local.family == AF_INET)
			o.flags |= VXDP_VNI_DF;
		if (p->spec.evpn)
			o.flags |= VXDP_VNI_EVPN;
		o.sport_min = p->spec.srcport_min;
		o.sport_max = p->spec.srcport_max;
		return o;
	}
	return o;
}

/* The VNI's flood list: its local ports, then every remote of its vxlan
 * ports, configured or from EVPN (once each); no port left: the VNI goes. */
static int kc_vni_rebuild(struct kdp_ctl *kc, uint32_t vni)
{
	struct vxdp_flood_ent fl[VXDP_FLOOD_MAX];
	unsigned n = 0;
	bool any = false;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (!p->used || p->spec.vni != vni)
			continue;
		any = true;
		if (p->spec.type != DPIF_PORT_VXLAN) {
			if (n == VXDP_FLOOD_MAX)
				return -E2BIG;
			fl[n++] = (struct vxdp_flood_ent){
				.ifindex = p->ifindex,
				.flags = (p->flags & VXDP_PORT_VETH) ? VXDP_FDB_VETH : 0,
			};
			continue;
		}
		for (unsigned r = 0; r < p->spec.n_remotes + p->n_evpn_vteps; r++) {
			const struct dpif_ip *ip = r < p->spec.n_remotes ? &p->spec.remotes[r]
								       : &p->evpn_vteps[r - p->spec.n_remotes];
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
	struct kdp_vni_outer outer = kc_vni_outer(kc, vni);
	return kdp_vni_set(kc->k, vni, &outer, fl, n);
}

/* ---- ports ----------------------------------------------------------------- */

static int kc_add_netdev(struct kdp_ctl *kc, struct kc_port *p, struct ctl_err *err)
{
	const struct dpif_port_spec *spec = &p->spec;
	if (spec->type == DPIF_PORT_NETDEV) {
		if (spec->netns[0])
			return kc_refuse(err, -EOPNOTSUPP,
				      "port %s: the kernel datapath takes links in vxswitchd's own namespace only "
				      "(a redirect cannot reach %s in netns %s); use --datapath user", spec->name, spec->dev,
				      spec->netns);
		uint32_t idx = if_nametoindex(spec->dev);
		if (!idx)
			return kc_refuse(err, -ENODEV, "port %s: no link %s", spec->name, spec->dev);
		if (kc_by_ifindex(kc, idx))
			return kc_refuse(err, -EEXIST, "port %s: link %s is a port already", spec->name, spec->dev);
		p->ifindex = idx;
		char drv[32];
		if (ethtool_driver(spec->dev, drv, sizeof(drv)) == 0 && !strcmp(drv, "veth"))
			p->flags |= VXDP_PORT_VETH;
	} else if (!kc_adopt_veth(kc, p)) {
		int ns = rtnl_netns_open(spec->netns);
		if (ns < 0)
			return kc_refuse(err, ns, "port %s: netns %s: %s", spec->name, spec->netns, strerror(-ns));
		int idx = kdp_link_veth_create(spec->name, spec->name, ns, spec->mtu);
		close(ns);
		if (idx < 0)
			return kc_refuse(err, idx, "port %s: cannot make the veth pair into netns %s: %s", spec->name,
				      spec->netns, strerror(-idx));
		p->ifindex = (uint32_t)idx;
		p->flags |= VXDP_PORT_VETH | VXDP_PORT_OURS;
		p->made_veth = true;
	}
	kc_kept_claim(kc, p->ifindex);
	struct kdp_port_opts po = { .vni = spec->vni, .flags = p->flags, .attach = true };
	int ret = kdp_port_add(kc->k, p->ifindex, &po);
	if (ret < 0) {
		p->ifindex = 0;
		return kc_refuse(err, ret, "port %s: cannot attach the kernel datapath's program: %s", spec->name,
			      strerror(-ret));
	}
	return 0;
}

static int kc_check_vxlan(const struct kdp_ctl *kc, const struct dpif_port_spec *spec, struct ctl_err *err)
{
	if (spec->dstport != kc->dstport)
		return kc_refuse(err, -EOPNOTSUPP, "port %s: dstport %u: the kernel datapath's vxlan device listens on %u",
			      spec->name, spec->dstport, kc->dstport);
	if (spec->mtu)
		return kc_refuse(err, -EOPNOTSUPP,
			      "port %s: mtu: the kernel datapath cannot cut a VM's TSO frames to a smaller MTU than "
			      "the VM's (no eBPF helper re-segments); set the VM's MTU, or use --datapath user",
			      spec->name);
	if (spec->srcport_max > VXDP_SPORT_TOP)
		return kc_refuse(err, -EOPNOTSUPP, "port %s: srcport %u-%u: the kernel datapath's vxlan device "
			      "sends from ports up to %u; use --datapath user", spec->name, spec->srcport_min,
			      spec->srcport_max, VXDP_SPORT_TOP);
	if (spec->df == DPIF_DF_INHERIT)
		return kc_refuse(err, -EOPNOTSUPP, "port %s: df inherit: the kernel datapath sets DF per VNI (set or "
			      "unset), not from each inner packet; use --datapath user", spec->name);
	if (!spec->udpcsum && spec->local.family == AF_INET6)
		return kc_refuse(err, -EOPNOTSUPP, "port %s: udpcsum off over IPv6: accepting zero checksums is a "
			      "setting of the shared vxlan device on the kernel datapath; use --datapath user", spec->name);
	/* The settings go with the VNI (vxdp_vni.flags): its vxlan ports agree. */
	for (unsigned i = 0; i < KC_MAX_PORTS; i++) {
		const struct kc_port *p = &kc->ports[i];
		if (p->used && p->spec.type == DPIF_PORT_VXLAN && p->spec.vni == spec->vni && strcmp(p->spec.name, spec->name) &&
		    (p->spec.udpcsum != spec->udpcsum || p->spec.df != spec->df || p->spec.srcport_min != spec->srcport_min ||
		     p->spec.srcport_max != spec->srcport_max))
			return kc_refuse(err, -EOPNOTSUPP, "port %s: udpcsum, df and srcport differ from port %s of vni "
				      "%u: the kernel datapath applies them per VNI", spec->name, p->spec.name, spec->vni);
	}
	return 0;
}

static int kc_port_add(struct kdp_ctl *kc, const struct dpif_port_spec *spec, uint16_t *id, struct ctl_err *err)
{
	const struct kc_port *have = kc_by_name(kc, spec->name);
	if (have && !memcmp(&have->spec, spec, sizeof(*spec))) {
		*id = kc_id(kc, have);
		return 0; /* the same port again: nothing to do */
	}
	if (have)
		return kc_refuse(err, -EEXIST, "port %s: exists", spec->name);
	struct kc_port *p = NULL;
	for (unsigned i = 0; i < KC_MAX_PORTS && !p; i++)
		if (!kc->ports[i].used)
			p = &kc->ports[i];
	if (!p)
		return kc_refuse(err, -ENOSPC, "port %s: the kernel datapath has %d ports already", spec->name, KC_MAX_PORTS);
	int ret = spec->type == DPIF_PORT_VXLAN ? kc_check_vxlan(kc, spec, err) : 0;
	if (ret < 0)
		return ret;
	*p = (struct kc_port){ .used = true };
	memcpy(&p->spec, spec, sizeof(*spec)); /* whole, padding too: the unchanged-line check compares it so */
	if (spec->type != DPIF_PORT_VXLAN && (ret = kc_add_netdev(kc, p, err)) < 0) {
		kc_port_drop(kc, p);
		return ret;
	}
	ret = kc_vni_rebuild(kc, spec->vni);
	if (ret < 0) {
		kc_port_drop(kc, p);
		kc_vni_rebuild(kc, spec->vni);
		return kc_refuse(err, ret, "port %s: VNI %u: %s", spec->name, spec->vni,
			      ret == -E2BIG ? "more than 32 ports and remote VTEPs to flood to" : strerror(-ret));
	}
	VLOG_INFO("port", "%s: added on the kernel datapath (%s, vni %u%s%s)", spec->name, kc_type_name(p), spec->vni,
		  p->ifindex ? ", ifindex " : "", p->ifindex ? (p->flags & VXDP_PORT_VETH ? "veth" : "netdev") : "");
	*id = kc_id(kc, p);
	return 0;
}

/* The port is gone when this returns, whatever the VNI's flood list
 * says: a flood list the map kept stale is logged, not returned (the
 * port cannot come back, and dpif's contract is "failed: nothing
 * changed"). */
static int kc_port_del(struct kdp_ctl *kc, struct kc_port *p)
{
	uint32_t vni = p->spec.vni;
	char name[DPIF_NAME_SIZE];
	memcpy(name, p->spec.name, sizeof(name));
	if (p->ifindex)
		kdp_port_del(kc->k, p->ifindex); /* no new entry can be learned behind it */
	kc_flush_port(kc, p);
	kc_port_drop(kc, p);
	int ret = kc_vni_rebuild(kc, vni);
	if (ret < 0)
		VLOG_ERR("port", "%s: removed, but VNI %u's flood list could not be rebuilt: %s", name, vni,
			 strerror(-ret));
	VLOG_INFO("port", "%s: removed from the kernel datapath", name);
	return 0;
}

/* ---- the kernel ends of the taps' slow-path links (kdp_ports.h) ------------ */

int kdp_ctl_internal_add(struct kdp_ctl *kc, const char *dev, uint32_t vni, uint16_t *id, struct ctl_err *err)
{
	if (kc_by_name(kc, dev))
		return kc_refuse(err, -EEXIST, "port %s: a kernel datapath port of that name exists", dev);
	struct kc_port *p = NULL;
	for (unsigned i = 0; i < KC_MAX_PORTS && !p; i++)
		if (!kc->ports[i].used)
			p = &kc->ports[i];
	if (!p)
		return kc_refuse(err, -ENOSPC, "%s: the kernel datapath has %d ports already", dev, KC_MAX_PORTS);
	uint32_t idx = if_nametoindex(dev);
	if (!idx)
		return kc_refuse(err, -ENODEV, "%s: no such link", dev);
	*p = (struct kc_port){ .used = true, .internal = true, .flags = VXDP_PORT_OURS };
	p->spec.type = DPIF_PORT_NETDEV;
	p->spec.vni = vni;
	snprintf(p->spec.name, sizeof(p->spec.name), "%s", dev);
	snprintf(p->spec.dev, sizeof(p->spec.dev), "%s", dev);
	/* No VXDP_PORT_VETH: its peer is in this namespace, where
	 * bpf_redirect_peer drops; a plain redirect crosses the pair.
	 * VXDP_PORT_OURS: a pair a killed --keep-datapath run left is
	 * deleted by --cleanup and by the next start's adoption. */
	struct kdp_port_opts po = { .vni = vni, .flags = VXDP_PORT_OURS, .attach = true };
	int ret = kdp_port_add(kc->k, idx, &po);
	if (ret < 0) {
		memset(p, 0, sizeof(*p));
		return kc_refuse(err, ret, "%s: cannot attach the kernel datapath's program: %s", dev, strerror(-ret));
	}
	p->ifindex = idx;
	ret = kc_vni_rebuild(kc, vni);
	if (ret < 0) {
		kc_port_drop(kc, p);
		kc_vni_rebuild(kc, vni);
		return kc_refuse(err, ret, "%s: VNI %u: %s", dev, vni,
				 ret == -E2BIG ? "more than 32 ports and remote VTEPs to flood to" : strerror(-ret));
	}
	*id = kc_id(kc, p);
	return 0;
}

void kdp_ctl_internal_del(struct kdp_ctl *kc, const char *dev)
{
	struct kc_port *p = kc_by_name(kc, dev);
	if (p && p->internal)
		kc_port_del(kc, p);
}

bool kdp_ctl_is_internal(struct kdp_ctl *kc, const char *name)
{
	const struct kc_port *p = kc_by_name(kc, name);
	return p && p->internal;
}

/* ---- EVPN's flood VTEPs ---------------------------------------------------- */

int kd_port_flood_vteps(struct dpif *dp, uint16_t id, const struct dpif_ip *vteps, unsigned n)
{
	struct kdp_ctl *kc = kc_of(dp);
	struct kc_port *p = kc_by_id(kc, id);
	if (!p || p->spec.type != DPIF_PORT_VXLAN)
		return -ENOENT;
	if (n > VXDP_FLOOD_MAX)
		return -E2BIG;
	struct kc_port was = *p;
	p->n_evpn_vteps = n;
	memcpy(p->evpn_vteps, vteps, n * sizeof(*vteps));
	int err = kc_vni_rebuild(kc, p->spec.vni);
	if (err < 0) /* the flood list in the map is the one before: so is ours */
		*p = was;
	return err;
}

/* ---- what the operator sees ------------------------------------------------ */

/* ---- dpif port_add / port_del (kdp_dpif.c) --------------------------------- */

int kd_port_add(struct dpif *dp, const struct dpif_port_spec *spec, uint16_t *id, char *why, size_t why_len)
{
	struct ctl_err err = { 0 };
	int ret = kc_port_add(kc_of(dp), spec, id, &err);
	if (ret < 0)
		snprintf(why, why_len, "%s", err.msg);
	return ret;
}

/* A slow-path link's kernel end goes with its VNI's last tap
 * (kdp_ctl_internal_del), never by port_del: -EPERM. */
int kd_port_del(struct dpif *dp, uint16_t id)
{
	struct kdp_ctl *kc = kc_of(dp);
	struct kc_port *p = kc_by_id(kc, id);
	if (!p)
		return -ENOENT;
	if (p->internal)
		return -EPERM;
	return kc_port_del(kc, p);
}


/* ---- for capture, stats and diagnose (kdp_ports.h) ------------------------- */

_Static_assert(KDP_CTL_MAX_REMOTES == CTL_MAX_REMOTES + VXDP_FLOOD_MAX, "kdp_ports.h's bound");

static void kc_info(const struct kc_port *p, struct kdp_ctl_port_info *out)
{
	out->spec = &p->spec;
	out->internal = p->internal;
}

const char *kdp_ctl_vtep_port(struct kdp_ctl *kc, uint32_t vni, bool v6, const uint8_t *addr)
{
	const struct kc_port *p = kc_vtep(kc, vni, v6 ? VXDP_FDB_V6 : 0, addr);
	return p ? p->spec.name : NULL;
}

int kdp_ctl_port_info(struct kdp_ctl *kc, const char *name, struct kdp_ctl_port_info *out)
{
	const struct kc_port *p = kc_by_name(kc, name);
	if (!p)
		return -ENOENT;
	kc_info(p, out);
	return 0;
}

