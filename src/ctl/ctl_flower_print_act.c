/* ctl_flower_print_act: a filter's actions in tc's layout (see
 * ctl_flower_print.h).  Each action kind prints as iproute2 6.1's
 * print_aopt of the kernel action tc would have made for it: mirred
 * redirect is stolen and mirror pipe, drop/pass/goto chain are gact,
 * vlan and tunnel_key are pipe; then "index I ref 1 bind 1" (an action of
 * a filter is bound to it once), and with -s the times and the counters. */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>

#include "ctl/ctl_flower.h"
#include "ctl/ctl_flower_print.h"
#include "ctl/ctl_print.h"

/* print_action_control(): the verdict, {"type", ["chain"]} in JSON. */
static void control(struct ctl_print *p, const char *prefix, const char *type, const uint32_t *chain)
{
	ctl_print_text(p, "%s", prefix);
	ctl_print_open_object(p, "control_action");
	ctl_print_string(p, CTL_PRINT_ANY, "type", "%s", type);
	if (chain)
		ctl_print_uint(p, CTL_PRINT_ANY, "chain", " chain %" PRIu64, *chain);
	ctl_print_close_object(p);
}

/* tc's print_tm() of what vxswitch knows: installed, and used (the kernel
 * counts from the install while a rule was never used).  tc's firstused
 * is left out: vxswitch keeps no first-use time. */
static void times(struct ctl_print *p, const struct ctl_flower_stats *st)
{
	ctl_print_uint(p, CTL_PRINT_ANY, "installed", " installed %" PRIu64 " sec", st->installed_sec);
	uint64_t used = st->used_sec < 0 ? st->installed_sec : (uint64_t)st->used_sec;
	ctl_print_uint(p, CTL_PRINT_ANY, "last_used", " used %" PRIu64 " sec", used);
}

/* "index I ref 1 bind 1" on its own line; sp is the " " m_gact, m_vlan and
 * m_tunnel_key put after the tab and m_mirred does not. */
static void index_line(struct ctl_print *p, const char *sp, uint32_t index,
		       const struct ctl_flower_stats *st)
{
	char fmt[32];
	ctl_print_nl(p);
	snprintf(fmt, sizeof(fmt), "\t%sindex %%" PRIu64, sp);
	ctl_print_uint(p, CTL_PRINT_ANY, "index", fmt, index);
	ctl_print_int(p, CTL_PRINT_ANY, "ref", " ref %" PRId64, 1);
	ctl_print_int(p, CTL_PRINT_ANY, "bind", " bind %" PRId64, 1);
	if (st)
		times(p, st);
	ctl_print_nl(p);
}

static void print_mirred(struct ctl_print *p, const struct flower_spec_action *a)
{
	bool redir = a->type == FLOWER_ACT_REDIRECT;
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", "mirred");
	ctl_print_text(p, "(%s", redir ? "Egress Redirect" : "Egress Mirror");
	ctl_print_string(p, CTL_PRINT_JSON, "mirred_action", NULL, redir ? "redirect" : "mirror");
	ctl_print_string(p, CTL_PRINT_JSON, "direction", NULL, "egress");
	ctl_print_string(p, CTL_PRINT_ANY, "to_dev", " to device %s)", a->dev);
	control(p, " ", redir ? "stolen" : "pipe", NULL);
}

/* m_gact with tc's default build (CONFIG_GACT_PROB): the "random type
 * none pass val 0" line of a gact without probability. */
static void print_gact(struct ctl_print *p, const struct flower_spec_action *a)
{
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", "gact");
	const char *t = a->type == FLOWER_ACT_DROP ? "drop" : a->type == FLOWER_ACT_PASS ? "pass"
		      : a->type == FLOWER_ACT_CONTINUE ? "continue" : a->type == FLOWER_ACT_PIPE ? "pipe"
		      : "goto";
	control(p, "action ", t, a->type == FLOWER_ACT_GOTO ? &a->chain : NULL);
	ctl_print_open_object(p, "prob");
	ctl_print_nl(p);
	ctl_print_string(p, CTL_PRINT_ANY, "random_type", "\t random type %s", "none");
	control(p, " ", "pass", NULL);
	ctl_print_text(p, " ");
	ctl_print_int(p, CTL_PRINT_ANY, "val", "val %" PRId64, 0);
	ctl_print_close_object(p);
}

/* The kernel dumps id, protocol (802.1Q unless given) and priority (0
 * unless given) for push and modify. */
static void print_vlan(struct ctl_print *p, const struct flower_spec_action *a)
{
	char buf[16];
	const char *what = a->type == FLOWER_ACT_VLAN_POP ? "pop" : a->type == FLOWER_ACT_VLAN_PUSH ? "push" : "modify";
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", "vlan");
	ctl_print_string(p, CTL_PRINT_ANY, "vlan_action", " %s", what);
	if (a->type != FLOWER_ACT_VLAN_POP) {
		uint16_t tpid = (a->given & FLOWER_AK_PROTOCOL) ? a->vlan_tpid : FLOWER_ETH_8021Q;
		ctl_print_uint(p, CTL_PRINT_ANY, "id", " id %" PRIu64, a->vlan_id);
		ctl_print_string(p, CTL_PRINT_ANY, "protocol", " protocol %s",
				 fl_tc_proto_name(tpid, buf, sizeof(buf)));
		ctl_print_uint(p, CTL_PRINT_ANY, "priority", " priority %" PRIu64,
			       (a->given & FLOWER_AK_PRIORITY) ? a->vlan_prio : 0);
	}
	control(p, " ", "pipe", NULL);
}

static void tunnel_ip(struct ctl_print *p, const char *name, const struct flower_ip *ip)
{
	char s[INET6_ADDRSTRLEN], fmt[32];
	if (!inet_ntop(ip->family, ip->bytes, s, sizeof(s)))
		return;
	snprintf(fmt, sizeof(fmt), "\t%s %%s", name);
	ctl_print_nl(p);
	ctl_print_string(p, CTL_PRINT_ANY, name, fmt, s);
}

/* The kernel dumps dst_port only when one was given, and the checksum
 * flag always (csum unless nocsum). */
static void print_tunnel_key(struct ctl_print *p, const struct flower_spec_action *a)
{
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", "tunnel_key");
	bool set = a->type == FLOWER_ACT_TUNNEL_SET;
	ctl_print_string(p, CTL_PRINT_ANY, "mode", " %s", set ? "set" : "unset");
	if (set) {
		tunnel_ip(p, "src_ip", &a->src);
		tunnel_ip(p, "dst_ip", &a->dst);
		ctl_print_nl(p);
		ctl_print_uint(p, CTL_PRINT_ANY, "key_id", "\tkey_id %" PRIu64, a->vni);
		if (a->given & FLOWER_AK_DST_PORT) {
			ctl_print_nl(p);
			ctl_print_uint(p, CTL_PRINT_ANY, "dst_port", "\tdst_port %" PRIu64, a->dst_port);
		}
		ctl_print_nl(p);
		ctl_print_string(p, CTL_PRINT_ANY, "flag", "\t%s",
				 (a->given & FLOWER_AK_NOCSUM) ? "nocsum" : "csum");
	}
	control(p, " ", "pipe", NULL);
}

/* tc's print_tcstats2_attr() of what the kernel copies for an action:
 * basic, queue (drops: what gact dropped), basic_hw.  Hardware is the
 * fast path (flow-cache hits), software the slow path (classifier
 * lookups); tc prints the split only when hardware counted something. */
static void print_stats(struct ctl_print *p, const struct flower_spec_action *a,
			const struct ctl_flower_stats *st)
{
	uint64_t pk = st->fast_packets + st->slow_packets, by = st->fast_bytes + st->slow_bytes;
	ctl_print_text(p, "\tAction statistics:");
	ctl_print_nl(p);
	ctl_print_open_object(p, "stats");
	ctl_print_uint(p, CTL_PRINT_ANY, "bytes", "\tSent %" PRIu64 " bytes", by);
	ctl_print_uint(p, CTL_PRINT_ANY, "packets", " %" PRIu64 " pkt", pk);
	ctl_print_uint(p, CTL_PRINT_ANY, "drops", " (dropped %" PRIu64, a->type == FLOWER_ACT_DROP ? pk : 0);
	ctl_print_uint(p, CTL_PRINT_ANY, "overlimits", ", overlimits %" PRIu64, 0);
	ctl_print_uint(p, CTL_PRINT_ANY, "requeues", " requeues %" PRIu64 ") ", 0);
	if (st->fast_packets || st->fast_bytes) {
		ctl_print_nl(p);
		ctl_print_uint(p, CTL_PRINT_ANY, "sw_bytes", "\tSent software %" PRIu64 " bytes",
			       st->slow_bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "sw_packets", " %" PRIu64 " pkt", st->slow_packets);
		ctl_print_nl(p);
		ctl_print_uint(p, CTL_PRINT_ANY, "hw_bytes", "\tSent hardware %" PRIu64 " bytes",
			       st->fast_bytes);
		ctl_print_uint(p, CTL_PRINT_ANY, "hw_packets", " %" PRIu64 " pkt", st->fast_packets);
	}
	ctl_print_nl(p);
	ctl_print_uint(p, CTL_PRINT_ANY, "backlog", "\tbacklog %" PRIu64 "b", 0);
	ctl_print_uint(p, CTL_PRINT_ANY, "qlen", " %" PRIu64 "p", 0);
	ctl_print_text(p, " requeues 0");
	ctl_print_close_object(p);
	ctl_print_nl(p);
}

static void print_one(struct ctl_print *p, const struct flower_spec_action *a, uint32_t index,
		      const struct ctl_flower_stats *st)
{
	switch (a->type) {
	case FLOWER_ACT_REDIRECT:
	case FLOWER_ACT_MIRROR:
		print_mirred(p, a);
		index_line(p, "", index, st);
		break;
	case FLOWER_ACT_DROP:
	case FLOWER_ACT_PASS:
	case FLOWER_ACT_GOTO:
	case FLOWER_ACT_CONTINUE:
	case FLOWER_ACT_PIPE:
		print_gact(p, a);
		index_line(p, " ", index, st);
		break;
	case FLOWER_ACT_VLAN_PUSH:
	case FLOWER_ACT_VLAN_POP:
	case FLOWER_ACT_VLAN_MODIFY:
		print_vlan(p, a);
		index_line(p, " ", index, st);
		break;
	default:
		print_tunnel_key(p, a);
		index_line(p, " ", index, st);
		break;
	}
	if (st)
		print_stats(p, a, st);
}

/* print_aopt() of an action with no options (the terse dump): its kind. */
static void print_kind(struct ctl_print *p, const struct flower_spec_action *a)
{
	const char *kind = "tunnel_key";
	switch (a->type) {
	case FLOWER_ACT_REDIRECT:
	case FLOWER_ACT_MIRROR:
		kind = "mirred";
		break;
	case FLOWER_ACT_DROP:
	case FLOWER_ACT_PASS:
	case FLOWER_ACT_GOTO:
	case FLOWER_ACT_CONTINUE:
	case FLOWER_ACT_PIPE:
		kind = "gact";
		break;
	case FLOWER_ACT_VLAN_PUSH:
	case FLOWER_ACT_VLAN_POP:
	case FLOWER_ACT_VLAN_MODIFY:
		kind = "vlan";
		break;
	}
	ctl_print_string(p, CTL_PRINT_ANY, "kind", "%s ", kind);
}

void fl_tc_print_actions(struct ctl_print *p, const struct flower_spec *f,
			 const uint32_t *act_index, const struct ctl_flower_stats *st, bool terse)
{
	ctl_print_open_array(p, "actions");
	for (unsigned int i = 0; i < f->n_actions; i++) {
		ctl_print_open_object(p, NULL);
		ctl_print_nl(p);
		ctl_print_uint(p, CTL_PRINT_ANY, "order", "\taction order %" PRIu64 ": ", i + 1);
		if (terse) {
			print_kind(p, &f->actions[i]);
			if (st)
				print_stats(p, &f->actions[i], st);
		} else {
			print_one(p, &f->actions[i], act_index ? act_index[i] : i + 1, st);
		}
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
}
