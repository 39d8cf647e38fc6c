/* A `port add` in a datapath's terms (control/port_spec.h). */
#include <string.h>

#include "control/port_spec.h"

_Static_assert((int)DPIF_NAME_SIZE == (int)CTL_NAME_SIZE && (int)DPIF_NETNS_SIZE == (int)CTL_NETNS_SIZE &&
		       (int)DPIF_MAX_REMOTES == (int)CTL_MAX_REMOTES,
	       "a `port add` fits a dpif_port_spec");
_Static_assert((int)DPIF_DF_SET == (int)CTL_DF_SET && (int)DPIF_DF_UNSET == (int)CTL_DF_UNSET &&
		       (int)DPIF_DF_INHERIT == (int)CTL_DF_INHERIT,
	       "df keeps its value");

static struct dpif_ip vxd_dpif_ip(const struct ctl_ip *ip)
{
	struct dpif_ip a;
	memset(&a, 0, sizeof(a));
	a.family = ip->family;
	memcpy(a.bytes, ip->bytes, sizeof(a.bytes));
	return a;
}

void vxd_port_spec(const struct ctl_port_add *pa, struct dpif_port_spec *s)
{
	memset(s, 0, sizeof(*s)); /* padding too: a datapath may compare two specs whole */
	memcpy(s->name, pa->name, sizeof(s->name));
	s->type = pa->type == CTL_PORT_VXLAN ? DPIF_PORT_VXLAN : pa->type == CTL_PORT_VETH ? DPIF_PORT_VETH
											 : DPIF_PORT_NETDEV;
	s->vni = pa->vni;
	s->mtu = (pa->given & CTL_PK_MTU) ? pa->mtu : 0;
	s->max_macs = pa->max_macs;
	memcpy(s->netns, pa->netns, sizeof(s->netns));
	memcpy(s->dev, pa->dev, sizeof(s->dev));
	s->local = vxd_dpif_ip(&pa->local);
	s->n_remotes = pa->n_remotes < DPIF_MAX_REMOTES ? pa->n_remotes : DPIF_MAX_REMOTES;
	for (unsigned r = 0; r < s->n_remotes; r++)
		s->remotes[r] = vxd_dpif_ip(&pa->remotes[r]);
	s->dstport = pa->dstport;
	if (pa->given & CTL_PK_SRCPORT) {
		s->srcport_min = pa->srcport_min;
		s->srcport_max = pa->srcport_max;
	}
	s->udpcsum = pa->udpcsum;
	s->df = (enum dpif_df)pa->df;
	s->evpn = pa->given & CTL_PK_EVPN;
}

