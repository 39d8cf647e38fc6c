/* `diagnose` of the kernel datapath: reads the programs' maps and the
 * devices into a struct diag_kdp_input and hands it to the pure judge
 * (report/diag_kdp.h); diagnose.c prints the findings with the others. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/kdp_ports.h"
#include "control/kdp_rules.h"
#include "control/vxd_internal.h"
#include "dp/kernel/kdp.h"
#include "dp/kernel/kdp_diag.h"
#include "report/diag_kdp.h"

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

static void fill_port(struct kdp_ctl *kc, struct kdp_rules_ctl *kr, const struct kdp_ctl_port_info *pi,
		      struct diag_kdp_port *dp)
{
	struct kdp *k = kdp_ctl_kdp(kc);
	const struct dpif_port_spec *spec = pi->spec;
	snprintf(dp->name, sizeof(dp->name), "%s", spec->name);
	dp->vni = spec->vni;
	dp->internal = pi->internal;
	if (!pi->ifindex) {
		dp->vxlan = true;
		dp->dst_port = spec->dstport;
		dp->family = spec->local.family == AF_INET6 ? 6 : 4;
		dp->underlay_mtu = local_mtu(&spec->local);
		for (unsigned r = 0; r < kdp_ctl_port_n_remotes(pi) && r < DIAG_KDP_MAX_REMOTES; r++) {
			const struct dpif_ip *ip = kdp_ctl_port_remote(pi, r);
			struct diag_kdp_remote *dr = &dp->remotes[dp->n_remotes++];
			inet_ntop(ip->family, ip->bytes, dr->addr, sizeof(dr->addr));
			kdp_vtep_stats_read(k, spec->vni, ip->family == AF_INET6 ? VXDP_FDB_V6 : 0, ip->bytes, &dr->s);
		}
		uint16_t id;
		if (kr && kdp_ctl_port_id(kc, spec->name, &id) == 0)
			dp->rules = kdp_rules_port_id_stats(kr, id, &dp->rs);
		return;
	}
	if (!if_indextoname(pi->ifindex, dp->dev))
		snprintf(dp->dev, sizeof(dp->dev), "%s", spec->type == DPIF_PORT_NETDEV ? spec->dev : spec->name);
	dp->attached = kdp_prog_attached(k, pi->ifindex, kdp_port_prog_fd(k));
	dp->mtu = dp->attached == -ENODEV ? 0 : dev_mtu(dp->dev);
	kdp_counters_read(k, pi->ifindex, &dp->c);
	if (kr)
		dp->rules = kdp_rules_port_stats(kr, pi->ifindex, &dp->rs);
}

void vxd_kdp_diag(struct vxd *vxd, const struct diag_input *in, struct diag_report *r)
{
	struct diag_kdp_input *ki = calloc(1, sizeof(*ki));
	if (!ki)
		return;
	struct kdp *k = kdp_ctl_kdp(vxd->kdp);
	ki->now_ns = kdp_now_ns();
	uint32_t tun = kdp_tun_ifindex(k);
	if (!if_indextoname(tun, ki->tun_name))
		snprintf(ki->tun_name, sizeof(ki->tun_name), "vxdp0");
	ki->tun_attached = kdp_prog_attached(k, tun, kdp_tun_prog_fd(k));
	kdp_counters_read(k, tun, &ki->tun);
	struct kdp_rules_ctl *kr = kdp_ctl_rules(vxd->kdp); /* NULL: no rules path (it did not open) */
	if (kr)
		kdp_rules_cache_state(kr, &ki->rules_entries, &ki->rules_cache_full);
	ki->rules_max = VXDP_RFLOWS;
	struct kdp_ctl_port_info pi;
	for (unsigned i = 0; i < kdp_ctl_port_slots() && ki->n_ports < DIAG_KDP_MAX_PORTS; i++)
		if (kdp_ctl_port_at(vxd->kdp, i, &pi))
			fill_port(vxd->kdp, kr, &pi, &ki->ports[ki->n_ports++]);
	diag_judge_kdp(in, ki, r);
	free(ki);
}
