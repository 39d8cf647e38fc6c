/* `filter add|del|show`: the control thread's side of flower rules.
 *
 * The control thread holds the current struct flower_table (vxd->flower,
 * switch/flower_table.h).  A change is a batch applied with
 * flower_table_apply(): a new table, put in a new view by vxd_publish(), and
 * the old table destroyed once the old view is gone (after the grace
 * period), so the worker sees the batch whole or not at all.  A command from
 * vxctl is a batch of one; a config file's rules are one batch (config.c);
 * so is a `vxctl -batch FILE` (CTL_BATCH: one request, ctl_proto.h), whose
 * refusal names the file's line.
 *
 * Port names are resolved against the running ports when a rule is added: a
 * rule naming a missing port (dev or mirred dev) is refused.  A port named by
 * rules cannot be deleted with `port del` (refused, naming the rules: delete
 * them first); reload, which rebuilds the rules from the file after the
 * ports, empties the table first when it removes a port some rule names. */
#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "port/vxlan.h"
#include "control/vxd_internal.h"
#include "switch/flower_hook.h"
#include "switch/flower_table.h"
#include "util/vlog.h"

int vxd_filter_resolve(void *aux, const char *name, uint16_t *id)
{
	struct vxd *vxd = aux;
	const struct port *p = vxd_port_by_name(vxd, name);
	const struct vxd_devport *d = p ? NULL : vxd_devport_by_name(vxd, name);
	if (!p && !d)
		return -ENOENT;
	*id = p ? p->id : d->id;
	return 0;
}

/* Makes t the current table: published, the old one freed after the grace
 * period (vxd_publish waits for it).  On failure t is freed, nothing
 * changed. */
static int vxd_filters_install(struct vxd *vxd, struct flower_table *t, struct ctl_err *err)
{
	struct flower_table *old = vxd->flower;
	vxd->flower = t;
	int ret = vxd_publish(vxd, NULL);
	if (ret < 0) {
		vxd->flower = old;
		flower_table_destroy(t);
		return vxd_refuse(err, ret, "filter: cannot publish the new rules: %s", strerror(-ret));
	}
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	for (unsigned i = 0; i < n; i++) /* no decision of `old` is used from here */
		if (dps[i]->class->rules_changed)
			dps[i]->class->rules_changed(dps[i], t);
	flower_table_destroy(old);
	return 0;
}

/* tunnel_key set (action i) gives the frames of the mirred that follows it
 * to a vxlan port their remote, VNI, UDP port and checksum (dp_rules.c);
 * the port sends from its own socket, bound to its local address, so a
 * src_ip other than that is refused here rather than sent otherwise than
 * asked. */
static int vxd_filter_tunnel_check(const struct vxd *vxd, const struct flower_spec *f, unsigned i,
				   struct ctl_err *err)
{
	const struct flower_spec_action *t = &f->actions[i];
	unsigned j = i + 1;
	while (j < f->n_actions && f->actions[j].type != FLOWER_ACT_REDIRECT && f->actions[j].type != FLOWER_ACT_MIRROR)
		j++;
	const struct port *p = j < f->n_actions ? vxd_port_by_name(vxd, f->actions[j].dev) : NULL;
	/* On a vxlan port's egress with no mirred after it: the key of the
	 * frame the port is sending (dp_egress.c). */
	if (j == f->n_actions && (f->given & FLOWER_SF_EGRESS))
		p = vxd_port_by_name(vxd, f->dev);
	if (!p || !port_is_vxlan(p))
		return vxd_refuse(err, -EINVAL, "action %u \"tunnel_key set\": needs a later mirred to a vxlan port "
				  "(it sets that port's tunnel key)%s", i + 1, (f->given & FLOWER_SF_EGRESS) ?
				  ", or the egress of a vxlan port (the key of what it sends)" : "");
	const struct vxlan_options *o = vxlan_port_options(p);
	uint8_t family = t->src.family == AF_INET6 ? 6 : 4;
	if (family != o->local.family || memcmp(t->src.bytes, o->local.bytes, 16))
		return vxd_refuse(err, -EOPNOTSUPP, "action %u \"src_ip\": refused, port %s sends from its local "
				  "address only", i + 1, p->name);
	return 0;
}

/* Egress rules (dp_egress.c on the userspace datapath; on the kernel one
 * a VM port's, on its device's egress hook: kdp_ports_rules.c says what
 * it refuses there, and a tap beside it takes none); a mirred
 * from a port's egress back to that port would send the frame round its
 * own egress rules until the nest limit drops it: refused.  indev is
 * taken on both datapaths: on the kernel one an ingress rule's upcalls
 * are classified with in_port = its port, an egress rule's with the port
 * the frame came in on (kdp_rules.c, from the key's in_ifindex and, for
 * the vxlan device's frame, the VNI and remote that name the vxlan
 * port), and a cached decision is keyed by them (vxdp_rkey), so an indev
 * rule decides per port as on the userspace one.  A tap's frames reach
 * the kernel datapath's ports through a slow-path link that does not say
 * which tap: indev naming a tap is refused on its egress rules. */
static int vxd_filter_egress_check(const struct vxd *vxd, const struct ctl_flower *f, struct ctl_err *err)
{
	bool egress = f->rule.given & FLOWER_SF_EGRESS;
	if (vxd->kdp && egress && vxd_port_by_name(vxd, f->rule.dev))
		return vxd_refuse(err, -EOPNOTSUPP, "filter %s dev %s egress: a tap beside the kernel datapath takes "
				  "no egress rules (its VM ports do); use --datapath user", ctl_flower_verb_name(f->verb),
				  f->rule.dev);
	if (!ctl_flower_has_rule(f))
		return 0;
	const struct flower_spec *r = &f->rule;
	if (vxd->kdp && egress && (r->match.given & FLOWER_FM_INDEV) && vxd_port_by_name(vxd, r->match.indev))
		return vxd_refuse(err, -EOPNOTSUPP, "filter %s dev %s egress: indev %s is a tap beside the kernel "
				  "datapath, whose frames reach its ports through the VNI's slow-path link, which does "
				  "not say which tap; use --datapath user", ctl_flower_verb_name(f->verb), r->dev,
				  r->match.indev);
	for (unsigned i = 0; egress && i < r->n_actions; i++) {
		uint8_t type = r->actions[i].type;
		if ((type == FLOWER_ACT_REDIRECT || type == FLOWER_ACT_MIRROR) && !strcmp(r->actions[i].dev, r->dev))
			return vxd_refuse(err, -EINVAL, "action %u \"mirred\": refused, dev %s from its own egress "
					  "would loop through the same rules (pass sends the frame on)", i + 1, r->dev);
	}
	return 0;
}

/* Beside the kernel datapath, taps run on the userspace one, joined to
 * each VNI by a slow-path link that L2-switches (kdp_slowpath.c).  A
 * mirred from a port of one datapath to a port of the other would reach
 * it as a frame to switch, not one to send out of that port, so neither
 * datapath could honour it: refused, naming both. */
static int vxd_filter_one_datapath(const struct vxd *vxd, const struct flower_spec *r, struct ctl_err *err)
{
	bool user = vxd_port_by_name(vxd, r->dev) != NULL;
	for (unsigned i = 0; i < r->n_actions; i++) {
		const struct flower_spec_action *a = &r->actions[i];
		if (a->type != FLOWER_ACT_REDIRECT && a->type != FLOWER_ACT_MIRROR)
			continue;
		bool to_user = vxd_port_by_name(vxd, a->dev) != NULL;
		if (to_user == user || (!to_user && !vxd_devport_by_name(vxd, a->dev)))
			continue; /* one datapath, or no such port (the table says so) */
		return vxd_refuse(err, -EOPNOTSUPP, "action %u \"mirred dev %s\": refused, %s is a tap beside the "
				  "kernel datapath and %s a port of it: a mirred cannot cross between them; make "
				  "the VM's port a veth, or use --datapath user", i + 1, a->dev, user ? r->dev : a->dev,
				  user ? a->dev : r->dev);
	}
	return 0;
}

/* What a datapath cannot do is refused here, at add, rather than
 * accepted and ignored: each datapath's own refusals (dpif rule_check)
 * for a rule on its ports, then the userspace datapath's, which are the
 * control thread's (they read its ports' options). */
static int vxd_filter_supported(struct vxd *vxd, const struct ctl_flower *f, struct ctl_err *err)
{
	int ret = vxd_filter_egress_check(vxd, f, err);
	if (ret < 0)
		return ret;
	if (!ctl_flower_has_rule(f))
		return 0;
	if (vxd->kdp && (ret = vxd_filter_one_datapath(vxd, &f->rule, err)) < 0)
		return ret;
	struct dpif *dps[VXD_MAX_DPIFS];
	unsigned n = vxd_dpifs(vxd, dps);
	char why[sizeof(err->msg)] = "";
	for (unsigned i = 0; i < n; i++)
		if (dps[i]->class->rule_check && (ret = dps[i]->class->rule_check(dps[i], &f->rule, why, sizeof(why))) < 0)
			return vxd_refuse(err, ret, "%s", why);
	if (!vxd_port_by_name(vxd, f->rule.dev))
		return 0; /* another datapath's port (its check was the one), or none (the table refuses it) */
	for (unsigned i = 0; i < f->rule.n_actions; i++) {
		switch (f->rule.actions[i].type) {
		case FLOWER_ACT_TUNNEL_SET: {
			ret = vxd_filter_tunnel_check(vxd, &f->rule, i, err);
			if (ret < 0)
				return ret;
			break;
		}
		default:
			break;
		}
	}
	return 0;
}

/* The batch as the switch's ops, each pointing at its command's rule.
 * From nothing, as a change of the current table (its version grows,
 * which the workers' flow caches rely on, flow_cache.h): a del of every
 * hook's rules first, whose specs are *dels (the caller frees it), then
 * the commands. */
static struct flower_op *vxd_filter_ops(const struct vxd *vxd, bool from_empty, const struct ctl_flower *cmds,
					size_t n, struct flower_spec **dels, size_t *n_out)
{
	size_t have = from_empty ? vxd_filters_n(vxd) : 0, k = 0;
	struct flower_op *all = calloc(have + n + 1, sizeof(*all));
	struct flower_spec *del = *dels = calloc(have + 1, sizeof(*del));
	if (!all || !del) {
		free(all);
		free(del);
		*dels = NULL;
		return NULL;
	}
	for (size_t i = 0; i < have; i++) {
		const struct flower_spec *s = vxd_filter_spec(vxd, i);
		bool egress = s->given & FLOWER_SF_EGRESS;
		if (k && !strcmp(del[k - 1].dev, s->dev) && egress == !!(del[k - 1].given & FLOWER_SF_EGRESS))
			continue; /* sorted by hook (port, then its egress): one del each */
		del[k].given = egress ? FLOWER_SF_EGRESS : 0;
		memcpy(del[k].dev, s->dev, sizeof(s->dev));
		all[k] = (struct flower_op){ .kind = FLOWER_OP_DEL, .spec = &del[k] };
		k++;
	}
	ctl_flower_ops(cmds, n, all + k);
	*n_out = k + n;
	return all;
}

/* Where the ops of a batch came from, to name the one refused: a -batch
 * file's lines ("FILE:LINE: msg"), else "rule i of n: msg", or the bare
 * message of a single command. */
struct vxd_batch_src {
	const char *name;
	const unsigned int *lines;
};

static int vxd_refuse_op(struct ctl_err *err, int ret, const struct vxd_batch_src *src, size_t i, size_t n,
			 const char *msg)
{
	char m[sizeof(err->msg)];
	snprintf(m, sizeof(m), "%s", msg);
	if (src && src->name)
		return vxd_refuse(err, ret, "%s:%u: %s", src->name, src->lines[i], m);
	if (n > 1)
		return vxd_refuse(err, ret, "rule %zu of %zu: %s", i + 1, n, m);
	return vxd_refuse(err, ret, "%s", m);
}

static int vxd_filters_apply_src(struct vxd *vxd, bool from_empty, const struct ctl_flower *ops, size_t n,
				 const struct vxd_batch_src *src, struct ctl_err *err)
{
	int ret;
	for (size_t i = 0; i < n; i++)
		if ((ret = vxd_filter_supported(vxd, &ops[i], err)) < 0)
			return vxd_refuse_op(err, ret, src, i, n, err->msg);
	size_t n_all = 0;
	struct flower_spec *dels = NULL;
	struct flower_op *all = vxd_filter_ops(vxd, from_empty, ops, n, &dels, &n_all);
	if (!all)
		return vxd_refuse(err, -ENOMEM, "filter: out of memory");
	size_t skip = n_all - n;
	struct flower_table *t = NULL;
	struct flower_error fe = { 0 };
	ret = flower_table_apply(vxd->flower, all, n_all, vxd_filter_resolve, vxd, vxd_now_ns(), &t, &fe);
	free(all);
	free(dels);
	if (ret < 0)
		return vxd_refuse_op(err, ret, src, fe.op - skip, n, fe.msg);
	return vxd_filters_install(vxd, t, err);
}

int vxd_filters_apply(struct vxd *vxd, bool from_empty, const struct ctl_flower *ops, size_t n,
		      struct ctl_err *err)
{
	return vxd_filters_apply_src(vxd, from_empty, ops, n, NULL, err);
}

int vxd_filter_batch(struct vxd *vxd, const struct ctl_batch *b, struct ctl_print *out, struct ctl_err *err)
{
	(void)out;
	if (b->n_cmds == 0)
		return 0; /* nothing but comments: nothing to change */
	struct ctl_flower *ops = malloc(b->n_cmds * sizeof(*ops));
	if (!ops)
		return vxd_refuse(err, -ENOMEM, "%s: out of memory", b->name);
	for (size_t i = 0; i < b->n_cmds; i++)
		ops[i] = b->cmds[i].filter;
	const struct vxd_batch_src src = { .name = b->name, .lines = b->lines };
	int ret = vxd_filters_apply_src(vxd, false, ops, b->n_cmds, &src, err);
	free(ops);
	if (ret == 0)
		VLOG_INFO("filter", "-batch %s: %zu commands applied as one change (%zu rules)", b->name, b->n_cmds,
			  flower_table_n_rules(vxd->flower));
	return ret;
}

int vxd_filters_clear(struct vxd *vxd, struct ctl_err *err)
{
	if (!vxd->flower || flower_table_n_rules(vxd->flower) == 0)
		return 0;
	return vxd_filters_apply(vxd, true, NULL, 0, err);
}

bool vxd_filter_names_port(const struct flower_rule *r, uint16_t id)
{
	if (flower_hook_port(r->port) == id)
		return true;
	if (r->match.mask.in_port && r->match.key.in_port == id) /* indev */
		return true;
	for (uint32_t a = 0; a < r->n_actions; a++) {
		uint8_t type = r->actions[a].type;
		if ((type == FLOWER_ACT_REDIRECT || type == FLOWER_ACT_MIRROR) && r->actions[a].port == id)
			return true;
	}
	return false;
}

int vxd_filters_port_in_use(const struct vxd *vxd, uint16_t id, const char *name, struct ctl_err *err)
{
	size_t n = vxd->flower ? flower_table_n_rules(vxd->flower) : 0, count = 0;
	const struct flower_rule *first = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct flower_rule *r = flower_table_rule(vxd->flower, i);
		if (vxd_filter_names_port(r, id)) {
			first = first ? first : r;
			count++;
		}
	}
	if (!count)
		return 0;
	char line[512];
	const struct ctl_flower add = { .verb = CTL_FILTER_ADD, .rule = first->spec };
	if (ctl_flower_format(&add, line, sizeof(line)) < 0)
		snprintf(line, sizeof(line), "dev %s pref %u handle %u", first->spec.dev, first->pref,
			 first->handle);
	return vxd_refuse(err, -EBUSY, "port %s: named by %zu flower rule%s (first: %s): delete %s first",
			  name, count, count == 1 ? "" : "s", line, count == 1 ? "it" : "them");
}

int vxd_filter(struct vxd *vxd, const struct ctl_flower *f, struct ctl_print *out, struct ctl_err *err)
{
	if (f->verb == CTL_FILTER_SHOW || f->verb == CTL_FILTER_GET)
		return vxd_filter_show(vxd, f, out, err);
	int ret = vxd_filters_apply(vxd, false, f, 1, err);
	if (ret == 0)
		VLOG_INFO("filter", "%s dev %s: done (%zu rules)", ctl_flower_verb_name(f->verb),
			  f->rule.dev, flower_table_n_rules(vxd->flower));
	return ret;
}

size_t vxd_filters_n(const struct vxd *vxd)
{
	return vxd->flower ? flower_table_n_rules(vxd->flower) : 0;
}

const struct flower_spec *vxd_filter_spec(const struct vxd *vxd, size_t i)
{
	return &flower_table_rule(vxd->flower, i)->spec;
}
