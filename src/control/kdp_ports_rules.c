/* Flower rules on the kernel datapath's ports: the port side of
 * control/kdp_rules.h (port ids, what is refused at add, the published
 * table, counters for filter show -s).  Control thread only. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "control/kdp_ports_internal.h"
#include "control/kdp_rules.h"
#include "dp/kernel/bpf/vxdp_rules_abi.h"
#include "dp/kernel/kdp.h"
#include "switch/flower_hook.h"
#include "switch/flower_table.h"
#include "util/vlog.h"

/* ---- flower rules (control/kdp_rules.h) ------------------------------------ */

uint16_t kc_id(const struct kdp_ctl *kc, const struct kc_port *p)
{
	return (uint16_t)(KDP_CTL_PORT_ID_BASE + (p - kc->ports));
}

struct kc_port *kc_by_id(struct kdp_ctl *kc, uint16_t id)
{
	unsigned i = (unsigned)id - KDP_CTL_PORT_ID_BASE;
	return id >= KDP_CTL_PORT_ID_BASE && i < KC_MAX_PORTS && kc->ports[i].used ? &kc->ports[i] : NULL;
}

static bool kc_rules_port(void *aux, uint16_t id, struct kr_port *out)
{
	const struct kc_port *p = kc_by_id(aux, id);
	if (!p)
		return false;
	*out = (struct kr_port){ .ifindex = p->ifindex, .flags = p->flags, .vni = p->spec.vni,
				 .n_remotes = p->spec.n_remotes, .remotes = p->spec.remotes };
	return true;
}

static bool kc_rules_ifindex(void *aux, uint32_t ifindex, uint16_t *id)
{
	struct kdp_ctl *kc = aux;
	const struct kc_port *p = kc_by_ifindex(kc, ifindex);
	if (p)
		*id = kc_id(kc, p);
	return p != NULL;
}

static bool kc_rules_vtep(void *aux, uint32_t vni, uint8_t family, const uint8_t *addr, uint16_t *id)
{
	struct kdp_ctl *kc = aux;
	const struct kc_port *p = kc_vtep(kc, vni, family == 6 ? VXDP_FDB_V6 : 0, addr);
	if (p)
		*id = kc_id(kc, p);
	return p != NULL;
}

void kc_rules_open(struct kdp_ctl *kc)
{
	int err = kdp_rules_ctl_open(kc->k, kc_rules_port, kc_rules_ifindex, kc_rules_vtep, kc, &kc->kr,
				     kc->kr_why, sizeof(kc->kr_why));
	struct epoll_event ev = { .events = EPOLLIN };
	if (err == 0 && epoll_ctl(kc->epfd, EPOLL_CTL_ADD, kdp_rules_ctl_fd(kc->kr), &ev) < 0) {
		snprintf(kc->kr_why, sizeof(kc->kr_why), "cannot poll the rules upcalls: %s", strerror(errno));
		err = -errno;
	}
	if (err < 0) {
		kdp_rules_ctl_close(kc->kr);
		kc->kr = NULL;
		VLOG_WARN("filter", "kernel datapath: no flower rules on its ports (%s)", kc->kr_why);
	}
}

int kdp_ctl_port_id(struct kdp_ctl *kc, const char *name, uint16_t *id)
{
	const struct kc_port *p = kc_by_name(kc, name);
	if (!p)
		return -ENOENT;
	*id = kc_id(kc, p);
	return 0;
}

/* tunnel_key set (action i) on the kernel datapath: the shared vxlan
 * device's UDP port and checksum setting, its route's source address. */
static int kc_rule_tunnel(struct kdp_ctl *kc, const struct flower_spec *f, unsigned i, struct ctl_err *err)
{
	const struct flower_spec_action *t = &f->actions[i];
	unsigned j = i + 1;
	while (j < f->n_actions && f->actions[j].type != FLOWER_ACT_REDIRECT && f->actions[j].type != FLOWER_ACT_MIRROR)
		j++;
	const struct kc_port *p = j < f->n_actions ? kc_by_name(kc, f->actions[j].dev) : NULL;
	if (!p || p->spec.type != DPIF_PORT_VXLAN)
		return kc_refuse(err, -EINVAL, "action %u \"tunnel_key set\": needs a later mirred to a vxlan port "
			      "(it sets that port's tunnel key)", i + 1);
	if (t->given & (FLOWER_AK_CSUM | FLOWER_AK_NOCSUM))
		return kc_refuse(err, -EOPNOTSUPP, "action %u \"tunnel_key set %s\": refused on the kernel datapath "
			      "(the shared vxlan device's checksum setting applies); use --datapath user", i + 1,
			      t->given & FLOWER_AK_CSUM ? "csum" : "nocsum");
	if ((t->given & FLOWER_AK_DST_PORT) && t->dst_port != kc->dstport)
		return kc_refuse(err, -EOPNOTSUPP, "action %u \"dst_port %u\": refused, the kernel datapath's vxlan "
			      "device sends to %u only", i + 1, t->dst_port, kc->dstport);
	if (t->src.family != p->spec.local.family || memcmp(t->src.bytes, p->spec.local.bytes, 16))
		return kc_refuse(err, -EOPNOTSUPP, "action %u \"src_ip\": refused, port %s sends from its local "
			      "address only", i + 1, p->spec.name);
	return 0;
}

/* A rule on a port's egress (bpf/vxdp_rules_abi.h, "Egress rules"): keyed
 * by the frame as it leaves and where it came in (indev, and at a VM
 * port's egress the tunnel it came out of: enc_*).  A vxlan port's
 * egress is the vxlan device's, where the sending tunnel key has replaced
 * the received one: enc_* keys, and an indev naming a vxlan port, are
 * refused there. */
static int kc_rule_egress(struct kdp_ctl *kc, const struct kc_port *p, const struct flower_spec *f,
			  struct ctl_err *err)
{
	if (!(f->given & FLOWER_SF_EGRESS) || p->spec.type != DPIF_PORT_VXLAN)
		return 0;
	const uint32_t enc = FLOWER_FM_ENC_KEY_ID | FLOWER_FM_ENC_SRC_IP | FLOWER_FM_ENC_DST_IP |
			     FLOWER_FM_ENC_DST_PORT;
	if ((f->match.given & enc) || (f->match.given_ext & (FLOWER_FX_ENC_TOS | FLOWER_FX_ENC_TTL)))
		return kc_refuse(err, -EOPNOTSUPP, "dev %s egress: enc_* keys are refused on a vxlan port's egress "
			      "on the kernel datapath (its vxlan device has replaced the tunnel a frame came in by "
			      "with the one it sends by); match them on the ingress, or use --datapath user", f->dev);
	const struct kc_port *in = f->match.given & FLOWER_FM_INDEV ? kc_by_name(kc, f->match.indev) : NULL;
	if (in && in->spec.type == DPIF_PORT_VXLAN)
		return kc_refuse(err, -EOPNOTSUPP, "dev %s egress: indev %s is refused on a vxlan port's egress on "
			      "the kernel datapath (its vxlan device has replaced the tunnel a frame came in by, which "
			      "names the vxlan port); use --datapath user", f->dev, in->spec.name);
	return 0;
}

/* dpif's rule_check: what the kernel datapath cannot do of a rule on one
 * of its ports: tunnel_key csum/nocsum, a dst_port or src_ip other than
 * the shared device's, more kernel actions than a decision holds, and
 * rules at all when the rules path did not open. */
static int kc_rule_check(struct kdp_ctl *kc, const struct flower_spec *f, struct ctl_err *err)
{
	const struct kc_port *p = kc_by_name(kc, f->dev);
	if (!p)
		return 0; /* another datapath's port, or none (the table refuses it) */
	if (!kc->kr)
		return kc_refuse(err, -EOPNOTSUPP, "dev %s: flower rules are not available on this kernel datapath (%s)",
			      f->dev, kc->kr_why);
	int ret = kc_rule_egress(kc, p, f, err);
	if (ret < 0)
		return ret;
	unsigned n_kernel = 0;
	for (unsigned i = 0; i < f->n_actions; i++) {
		const struct flower_spec_action *a = &f->actions[i];
		ret = a->type == FLOWER_ACT_TUNNEL_SET ? kc_rule_tunnel(kc, f, i, err) : 0;
		if (ret < 0)
			return ret;
		const struct kc_port *q = a->type == FLOWER_ACT_REDIRECT || a->type == FLOWER_ACT_MIRROR
						  ? kc_by_name(kc, a->dev) : NULL;
		bool tun = i && f->actions[i - 1].type == FLOWER_ACT_TUNNEL_SET;
		n_kernel += q && q->spec.type == DPIF_PORT_VXLAN && !tun ? q->spec.n_remotes
			    : a->type == FLOWER_ACT_TUNNEL_SET || a->type == FLOWER_ACT_TUNNEL_UNSET ||
			      a->type == FLOWER_ACT_GOTO || a->type == FLOWER_ACT_PASS ? 0 : 1;
	}
	if (n_kernel > VXDP_RACT_MAX)
		return kc_refuse(err, -EOPNOTSUPP, "filter: %u kernel actions (a mirred to a vxlan port is one per "
			      "remote): the kernel datapath holds %d per decision", n_kernel, VXDP_RACT_MAX);
	return 0;
}

int kd_rule_check(struct dpif *dp, const struct flower_spec *f, char *why, size_t why_len)
{
	struct ctl_err err = { 0 };
	int ret = kc_rule_check(kc_of(dp), f, &err);
	if (ret < 0)
		snprintf(why, why_len, "%s", err.msg);
	return ret;
}

/* The cached decisions of older tables are no longer used when this
 * returns: kdp_rules_changed moves the generation the programs check. */
void kd_rules_changed(struct dpif *dp, const struct flower_table *t)
{
	struct kdp_ctl *kc = kc_of(dp);
	kc->t = t;
	if (!kc->kr)
		return;
	uint16_t ids[KC_MAX_PORTS];
	size_t n = 0;
	for (unsigned i = 0; i < KC_MAX_PORTS; i++)
		if (kc->ports[i].used)
			ids[n++] = kc_id(kc, &kc->ports[i]);
	kdp_rules_changed(kc->kr, t, ids, n);
}

int kd_rule_counters(struct dpif *dp, struct flower_counters *fc)
{
	struct kdp_ctl *kc = kc_of(dp);
	if (kc->kr)
		kdp_rules_counters(kc->kr, fc);
	return 0;
}
