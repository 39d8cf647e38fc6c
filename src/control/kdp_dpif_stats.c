/* The kernel datapath's counters behind dp/dpif.h ("Counters"): its
 * ports (port_dump, port_stats, port_vteps) and itself (dp_stats,
 * fdb_vni_macs), read from the programs' per-CPU maps (dp/kernel/kdp.h,
 * kdp_diag.h) and the rules path's (control/kdp_rules.h), put in the
 * dpif's words.  What only it has is printed by kdp_stats.c (show). */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"
#include "dp/kernel/kdp_diag.h"
#include "port/port.h"

_Static_assert((int)DPIF_HIST_BUCKETS == (int)VXDP_HIST_BUCKETS, "the programs' size buckets are the dpif's");
_Static_assert((int)DPIF_HIST_BUCKETS == (int)PORT_HIST_BUCKETS, "and the userspace datapath's");
_Static_assert((int)VXDP_DROP_COUNT <= (int)DPIF_MAX_DROP_REASONS, "every drop reason of the programs fits");
_Static_assert((int)KDP_CTL_MAX_REMOTES <= (int)DPIF_MAX_VTEPS, "a vxlan port's remotes fit port_vteps");

static const char *const kd_drop_names[VXDP_DROP_COUNT] = {
#define KD_DROP_NAME(n, s) s,
	VXDP_DROP_REASONS(KD_DROP_NAME)
#undef KD_DROP_NAME
};

static uint32_t dev_mtu(const char *dev)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	int ret = ioctl(fd, SIOCGIFMTU, &ifr);
	close(fd);
	return ret < 0 ? 0 : (uint32_t)ifr.ifr_mtu;
}

/* The MTU of the device that holds `local` (0: none here). */
static uint32_t local_mtu(const struct dpif_ip *local)
{
	struct ifaddrs *ifa, *i;
	uint32_t mtu = 0;
	if (getifaddrs(&ifa) < 0)
		return 0;
	for (i = ifa; i && !mtu; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != local->family)
			continue;
		const void *a = local->family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr
							  : (const void *)&((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		if (!memcmp(a, local->bytes, local->family == AF_INET6 ? 16 : 4))
			mtu = dev_mtu(i->ifa_name);
	}
	freeifaddrs(ifa);
	return mtu;
}

/* The programs' counters in the dpif's words (the ABI's __u64 is unsigned
 * long long, uint64_t may not be). */
void kd_counters(const struct vxdp_counters *c, struct dpif_port_stats *o)
{
	o->rx_frames = c->rx_packets;
	o->rx_bytes = c->rx_bytes;
	o->tx_frames = c->tx_packets;
	o->tx_bytes = c->tx_bytes;
	for (unsigned b = 0; b < DPIF_HIST_BUCKETS; b++) {
		o->tx_hist_frames[b] = c->hist_frames[b];
		o->tx_hist_bytes[b] = c->hist_bytes[b];
	}
	o->flooded = c->flood_packets;
	o->drop_names = kd_drop_names;
	o->n_drop_reasons = VXDP_DROP_COUNT;
	o->not_lost = 1u << VXDP_DROP_FLOOD_DONE;
	for (unsigned r = 0; r < VXDP_DROP_COUNT; r++)
		o->drops[r] = c->drops[r];
#define KD_UPCALL(f, text, help) o->f = c->f;
	DPIF_UPCALL_COUNTERS(KD_UPCALL)
#undef KD_UPCALL
	o->upcall_drops_rate = c->upcall_drops_rate;
	o->upcall_drops_ring = c->upcall_drops_ring;
}

/* The counters of device ifindex (those of no port: zeros). */
static void kd_read(struct kdp_ctl *kc, uint32_t ifindex, struct dpif_port_stats *o)
{
	struct vxdp_counters c;
	if (kdp_counters_read(kc->k, ifindex, &c) < 0)
		memset(&c, 0, sizeof(c));
	kd_counters(&c, o);
}

int kd_port_dump(struct dpif *dp, unsigned *cursor, uint16_t *id)
{
	struct kdp_ctl *kc = kc_of(dp);
	for (; *cursor < KC_MAX_PORTS; (*cursor)++)
		if (kc->ports[*cursor].used) {
			*id = kc_id(kc, &kc->ports[(*cursor)++]);
			return 0;
		}
	return -ENOENT;
}

static unsigned kd_n_remotes(const struct kc_port *p)
{
	return p->spec.n_remotes + p->n_evpn_vteps;
}

static const struct dpif_ip *kd_remote(const struct kc_port *p, unsigned r)
{
	return r < p->spec.n_remotes ? &p->spec.remotes[r] : &p->evpn_vteps[r - p->spec.n_remotes];
}

int kd_port_stats(struct dpif *dp, uint16_t id, struct dpif_port_stats *o)
{
	struct kdp_ctl *kc = kc_of(dp);
	const struct kc_port *p = kc_by_id(kc, id);
	if (!p)
		return -ENOENT;
	memset(o, 0, sizeof(*o));
	snprintf(o->name, sizeof(o->name), "%s", p->spec.name);
	o->type = kc_type_name(p);
	o->vni = p->spec.vni;
	o->internal = p->internal;
	o->n_macs = p->n_macs;
	o->max_macs = p->spec.max_macs;
	struct vxdp_rstats rs;
	if (!p->ifindex) {
		o->vxlan = true;
		o->attached = 1; /* no program of its own: the vxlan device's (dp_stats) */
		o->underlay_family = p->spec.local.family;
		o->dst_port = kc->dstport;
		o->mtu = local_mtu(&p->spec.local);
		if (kc->kr && kdp_rules_port_id_stats(kc->kr, id, &rs))
			goto rules;
		return 0;
	}
	o->ifindex = p->ifindex;
	if (!if_indextoname(p->ifindex, o->dev))
		snprintf(o->dev, sizeof(o->dev), "%s", p->spec.type == DPIF_PORT_NETDEV ? p->spec.dev : p->spec.name);
	o->program = "vxdp_port_ingress";
	o->attached = kdp_prog_attached(kc->k, p->ifindex, kdp_port_prog_fd(kc->k));
	o->mtu = o->attached == -ENODEV ? 0 : dev_mtu(o->dev);
	kd_read(kc, p->ifindex, o);
	if (!kc->kr || !kdp_rules_port_stats(kc->kr, p->ifindex, &rs))
		return 0;
rules:
	o->rule_path = true;
	o->rule_hits = rs.hits;
	o->rule_misses = rs.misses;
	o->rule_stale = rs.stale;
	return 0;
}

static uint64_t kd_age(uint64_t now, uint64_t then)
{
	return then ? (now > then ? now - then : 0) : UINT64_MAX;
}

int kd_port_vteps(struct dpif *dp, uint16_t id, struct dpif_vtep_stats *out, unsigned max)
{
	struct kdp_ctl *kc = kc_of(dp);
	const struct kc_port *p = kc_by_id(kc, id);
	if (!p || p->ifindex)
		return -ENOENT;
	uint64_t now = kdp_now_ns();
	unsigned n = 0;
	for (unsigned r = 0; r < kd_n_remotes(p) && n < max; r++) {
		const struct dpif_ip *ip = kd_remote(p, r);
		struct vxdp_vtep_stats s;
		if (kdp_vtep_stats_read(kc->k, p->spec.vni, ip->family == AF_INET6 ? VXDP_FDB_V6 : 0, ip->bytes, &s) < 0)
			memset(&s, 0, sizeof(s));
		out[n++] = (struct dpif_vtep_stats){
			.remote = *ip, .evpn = r >= p->spec.n_remotes,
			.tx_frames = s.tx_packets, .tx_bytes = s.tx_bytes,
			.rx_frames = s.rx_packets, .rx_bytes = s.rx_bytes,
			.rx_age_ns = kd_age(now, s.last_rx_ns), .tx_age_ns = kd_age(now, s.last_tx_ns),
		};
	}
	return (int)n;
}

int kd_dp_stats(struct dpif *dp, struct dpif_dp_stats *o)
{
	struct kdp_ctl *kc = kc_of(dp);
	memset(o, 0, sizeof(*o));
	o->now_ns = kdp_now_ns();
	o->attach = kdp_attach_kind(kc->k) == KDP_ATTACH_CLS_BPF ? "cls_bpf" : "tcx";
	uint32_t tun = kdp_tun_ifindex(kc->k);
	if (!if_indextoname(tun, o->dev))
		snprintf(o->dev, sizeof(o->dev), "vxdp0");
	o->dev_program = "vxdp_tun_ingress";
	o->dev_attached = kdp_prog_attached(kc->k, tun, kdp_tun_prog_fd(kc->k));
	snprintf(o->dev_stats.name, sizeof(o->dev_stats.name), "%s", o->dev);
	o->dev_stats.ifindex = tun;
	kd_read(kc, tun, &o->dev_stats);
	o->rule_cache = kc->kr != NULL; /* NULL: the rules path did not open */
	o->rule_cache_max = VXDP_RFLOWS;
	if (kc->kr)
		kdp_rules_cache_state(kc->kr, &o->rule_cache_entries, &o->rule_cache_full);
	return 0;
}

uint32_t kd_fdb_vni_macs(struct dpif *dp, uint32_t vni, uint32_t *cap)
{
	struct kdp_ctl *kc = kc_of(dp);
	const struct kc_vni *v = kc_vni(kc, vni, false);
	*cap = kc->fdb_max ? kc->fdb_max : KC_FDB_MAX_DEFAULT;
	return v ? v->n_macs : 0;
}
