/* ctl_flower_action: one parse/print pair per action (see ctl_flower.h for
 * which words tc accepts that are accepted here, and which are refused). */
#include <string.h>

#include "ctl/ctl_flower_internal.h"

/* The word after the action's own words, or NULL at the end. */
static const char *peek(const struct ctl_parser *ps)
{
	return ctl_at_end(ps) ? NULL : ps->argv[ps->pos];
}

static bool next_is(struct ctl_parser *ps, const char *word)
{
	const char *w = peek(ps);
	if (w && !strcmp(w, word)) {
		ps->pos++;
		return true;
	}
	return false;
}

static int expect(struct ctl_parser *ps, const char *word, const char *why)
{
	if (next_is(ps, word))
		return 0;
	return ctl_fail(ps, ps->pos, "expected \"%s\"%s", word, why);
}

/* ---- mirred ---------------------------------------------------------------- */

static int parse_mirred(struct ctl_parser *ps, struct flower_spec_action *a)
{
	int ret = expect(ps, "egress", ": only egress mirred is supported (an ingress "
			 "redirect would re-enter a port's own receive path)");
	if (ret)
		return ret;
	if (next_is(ps, "redirect"))
		a->type = FLOWER_ACT_REDIRECT;
	else if (next_is(ps, "mirror"))
		a->type = FLOWER_ACT_MIRROR;
	else
		return ctl_fail(ps, ps->pos, "expected \"redirect\" or \"mirror\"");
	ret = expect(ps, "dev", ": mirred needs its target, dev PORT");
	return ret ? ret : ctl_parse_name(ps, "dev", CTL_NAME_SIZE, false, a->dev);
}

/* ---- gact ------------------------------------------------------------------ */

static int parse_goto(struct ctl_parser *ps, struct flower_spec_action *a)
{
	int ret = expect(ps, "chain", " after \"goto\"");
	if (ret)
		return ret;
	uint64_t n;
	ret = fl_take_num_base(ps, "chain", 10, 0, UINT32_MAX, &n);
	a->type = FLOWER_ACT_GOTO;
	a->chain = (uint32_t)n;
	return ret;
}

/* drop|shot|pass|ok|goto chain N, with its word at ps->pos - 1; 1 if the
 * word is none of them. */
static int parse_verdict(struct ctl_parser *ps, const char *w, struct flower_spec_action *a)
{
	if (!strcmp(w, "drop") || !strcmp(w, "shot"))
		a->type = FLOWER_ACT_DROP;
	else if (!strcmp(w, "pass") || !strcmp(w, "ok"))
		a->type = FLOWER_ACT_PASS;
	else if (!strcmp(w, "goto"))
		return parse_goto(ps, a);
	else if (!strcmp(w, "continue"))
		a->type = FLOWER_ACT_CONTINUE;
	else if (!strcmp(w, "pipe"))
		a->type = FLOWER_ACT_PIPE;
	else if (!strcmp(w, "reclassify"))
		return ctl_fail(ps, ps->pos - 1, "\"reclassify\" is not supported: it restarts "
				"classification of a frame the actions before did not change, which "
				"loops to the kernel's limit and drops it; use goto chain N");
	else if (!strcmp(w, "jump"))
		return ctl_fail(ps, ps->pos - 1, "\"jump\" is not supported: a rule's actions "
				"run in order here, with no branch inside the list; use a rule per case");
	else if (!strcmp(w, "trap"))
		return ctl_fail(ps, ps->pos - 1, "\"trap\" is not supported: it hands a frame "
				"from hardware to the CPU, and vxswitch has no hardware");
	else
		return 1;
	return 0;
}

static int parse_gact(struct ctl_parser *ps, struct flower_spec_action *a)
{
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "expected drop, pass, continue, pipe or goto chain "
				"N after \"gact\"");
	const char *w = ps->argv[ps->pos++];
	int ret = parse_verdict(ps, w, a);
	if (ret == 1)
		return ctl_fail(ps, ps->pos - 1, "unsupported gact verdict, expected drop, shot, "
				"pass, ok, continue, pipe or goto chain N");
	return ret;
}

/* ---- tunnel_key ------------------------------------------------------------ */

/* The key bits of tunnel_key set: FLOWER_AK_* for what is printed only when
 * given, these for the keys it requires. */
enum { TK_ID = 1u << 8, TK_SRC = 1u << 9, TK_DST = 1u << 10 };

static uint32_t tunnel_key_bit(const char *w)
{
	static const struct {
		const char *word;
		uint32_t bit;
	} tk[] = {
		{ "id", TK_ID }, { "src_ip", TK_SRC }, { "dst_ip", TK_DST },
		{ "dst_port", FLOWER_AK_DST_PORT }, { "csum", FLOWER_AK_CSUM }, { "nocsum", FLOWER_AK_NOCSUM },
	};
	for (size_t i = 0; i < sizeof(tk) / sizeof(tk[0]); i++)
		if (!strcmp(w, tk[i].word))
			return tk[i].bit;
	return 0;
}

/* One key of tunnel_key set, its word at ps->pos - 1; 1 if unknown. */
static int tunnel_set_key(struct ctl_parser *ps, const char *w, struct flower_spec_action *a,
			  uint32_t *seen)
{
	uint32_t bit = tunnel_key_bit(w);
	if (!bit)
		return 1;
	uint32_t have = *seen | a->given;
	if (have & bit)
		return ctl_fail(ps, ps->pos - 1, "duplicate \"%s\"", w);
	if ((bit & (FLOWER_AK_CSUM | FLOWER_AK_NOCSUM)) && (have & (FLOWER_AK_CSUM | FLOWER_AK_NOCSUM)))
		return ctl_fail(ps, ps->pos - 1, "\"csum\" and \"nocsum\": one at most");
	uint64_t n = 0;
	int ret = 0;
	if (bit == TK_ID) {
		ret = fl_take_num_base(ps, w, 10, 0, CTL_VNI_MAX, &n);
		a->vni = (uint32_t)n;
	} else if (bit == TK_SRC || bit == TK_DST) {
		struct ctl_ip ip = { 0 };
		ret = ctl_parse_ip(ps, w, &ip);
		fl_ip_from_ctl(bit == TK_SRC ? &a->src : &a->dst, &ip);
	} else if (bit == FLOWER_AK_DST_PORT) {
		ret = fl_take_num_base(ps, w, 10, 1, 65535, &n);
		a->dst_port = (uint16_t)n;
	}
	if (bit < TK_ID)
		a->given |= (uint8_t)bit;
	else
		*seen |= bit;
	return ret;
}

static int parse_tunnel_key(struct ctl_parser *ps, struct flower_spec_action *a)
{
	if (next_is(ps, "unset")) {
		a->type = FLOWER_ACT_TUNNEL_UNSET;
		return 0;
	}
	int ret = expect(ps, "set", ": tunnel_key takes set or unset");
	if (ret)
		return ret;
	a->type = FLOWER_ACT_TUNNEL_SET;
	a->dst_port = CTL_VXLAN_DEFAULT_DSTPORT;
	uint32_t seen = 0;
	while (peek(ps) && strcmp(peek(ps), "action") && strcmp(peek(ps), "actions")) {
		const char *w = ps->argv[ps->pos++];
		ret = tunnel_set_key(ps, w, a, &seen);
		if (ret == 1)
			return ctl_fail(ps, ps->pos - 1, "unknown tunnel_key set key, expected id, "
					"src_ip, dst_ip, dst_port, csum or nocsum (ttl, tos and "
					"geneve options are not supported)");
		if (ret)
			return ret;
	}
	static const char *const names[] = { "id", "src_ip", "dst_ip" };
	for (int i = 0; i < 3; i++)
		if (!(seen & (TK_ID << i)))
			return ctl_fail(ps, ps->pos, "tunnel_key set needs \"%s\": the frame is "
					"encapsulated with it", names[i]);
	if (a->src.family != a->dst.family)
		return ctl_fail(ps, ps->pos, "tunnel_key set: src_ip and dst_ip are of different "
				"families");
	return 0;
}

/* ---- vlan ------------------------------------------------------------------ */

static int vlan_key(struct ctl_parser *ps, const char *w, struct flower_spec_action *a,
		    bool *have_id)
{
	uint64_t n;
	uint8_t bit;
	int ret;
	if (!strcmp(w, "id")) {
		if (*have_id)
			return ctl_fail(ps, ps->pos - 1, "duplicate \"id\"");
		*have_id = true;
		ret = fl_take_num(ps, w, 0, 4095, &n);
		a->vlan_id = (uint16_t)n;
		return ret;
	}
	if (!strcmp(w, "priority")) {
		bit = FLOWER_AK_PRIORITY;
		ret = fl_take_num(ps, w, 0, 7, &n);
		a->vlan_prio = (uint8_t)n;
	} else if (!strcmp(w, "protocol") && a->type == FLOWER_ACT_VLAN_PUSH) {
		bit = FLOWER_AK_PROTOCOL;
		ret = fl_take_protocol(ps, w, &a->vlan_tpid);
		if (!ret && a->vlan_tpid != FLOWER_ETH_8021Q && a->vlan_tpid != FLOWER_ETH_8021AD)
			ret = ctl_fail(ps, ps->pos - 1, "vlan push protocol must be 802.1Q or 802.1ad");
	} else {
		return ctl_fail(ps, ps->pos - 1, "unknown vlan key, expected id, priority%s",
				a->type == FLOWER_ACT_VLAN_PUSH ? " or protocol" : "");
	}
	if (ret)
		return ret;
	if (a->given & bit)
		return ctl_fail(ps, ps->pos - 2, "duplicate \"%s\"", w);
	a->given |= bit;
	return 0;
}

static int parse_vlan(struct ctl_parser *ps, struct flower_spec_action *a)
{
	if (next_is(ps, "pop")) {
		a->type = FLOWER_ACT_VLAN_POP;
		return 0;
	}
	if (next_is(ps, "push"))
		a->type = FLOWER_ACT_VLAN_PUSH;
	else if (next_is(ps, "modify"))
		a->type = FLOWER_ACT_VLAN_MODIFY;
	else
		return ctl_fail(ps, ps->pos, "expected push, pop or modify after \"vlan\"");
	a->vlan_tpid = FLOWER_ETH_8021Q;
	bool have_id = false;
	while (peek(ps) && strcmp(peek(ps), "action") && strcmp(peek(ps), "actions")) {
		const char *w = ps->argv[ps->pos++];
		int ret = vlan_key(ps, w, a, &have_id);
		if (ret)
			return ret;
	}
	if (!have_id)
		return ctl_fail(ps, ps->pos, "vlan %s needs \"id\"",
				a->type == FLOWER_ACT_VLAN_PUSH ? "push" : "modify");
	return 0;
}

/* ---- the list ---------------------------------------------------------------- */

static bool is_terminal(uint8_t type)
{
	return type == FLOWER_ACT_REDIRECT || type == FLOWER_ACT_DROP || type == FLOWER_ACT_PASS ||
	       type == FLOWER_ACT_GOTO || type == FLOWER_ACT_CONTINUE;
}

static int parse_one(struct ctl_parser *ps, struct flower_spec_action *a)
{
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "missing action after \"action\"");
	const char *w = ps->argv[ps->pos++];
	if (!strcmp(w, "mirred"))
		return parse_mirred(ps, a);
	if (!strcmp(w, "gact"))
		return parse_gact(ps, a);
	if (!strcmp(w, "tunnel_key"))
		return parse_tunnel_key(ps, a);
	if (!strcmp(w, "vlan"))
		return parse_vlan(ps, a);
	int ret = parse_verdict(ps, w, a);
	if (ret == 1)
		return ctl_fail(ps, ps->pos - 1, "unsupported action, expected mirred, drop, pass, "
				"goto, continue, pipe, gact, tunnel_key or vlan");
	return ret;
}

int fl_parse_actions(struct ctl_parser *ps, struct flower_spec *f)
{
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "a rule needs an action, expected \"action ACTION\"");
	while (!ctl_at_end(ps)) {
		const char *w = ps->argv[ps->pos];
		if (strcmp(w, "action") && strcmp(w, "actions"))
			return ctl_fail(ps, ps->pos, "unexpected word, expected \"action\"");
		if (f->n_actions > 0 && is_terminal(f->actions[f->n_actions - 1].type))
			return ctl_fail(ps, ps->pos, "unreachable: the action before ends the list "
					"(drop, pass, goto, continue and redirect are "
					"final)");
		if (f->n_actions == FLOWER_MAX_ACTIONS)
			return ctl_fail(ps, ps->pos, "too many actions, at most %d",
					FLOWER_MAX_ACTIONS);
		ps->pos++;
		int ret = parse_one(ps, &f->actions[f->n_actions]);
		if (ret)
			return ret;
		f->n_actions++;
		/* tc lets a control word follow an action; after a list-ending
		 * action it could never be reached, and the others are refused
		 * by name here rather than read as an unknown word. */
		const char *next = peek(ps);
		if (next && strcmp(next, "action") && strcmp(next, "actions"))
			return ctl_fail(ps, ps->pos, "unsupported word after an action: a control "
					"word there (pipe, continue, reclassify, jump) is not supported; "
					"write continue or pipe as an action of its own (\"action "
					"continue\"), expected \"action\"");
	}
	return 0;
}

/* ---- printers ---------------------------------------------------------------- */

static void print_one(struct ctl_sbuf *sb, const struct flower_spec_action *a)
{
	switch (a->type) {
	case FLOWER_ACT_REDIRECT:
	case FLOWER_ACT_MIRROR:
		ctl_sb_printf(sb, " mirred egress %s dev %s",
			      a->type == FLOWER_ACT_REDIRECT ? "redirect" : "mirror", a->dev);
		break;
	case FLOWER_ACT_DROP:
		ctl_sb_printf(sb, " drop");
		break;
	case FLOWER_ACT_PASS:
		ctl_sb_printf(sb, " pass");
		break;
	case FLOWER_ACT_GOTO:
		ctl_sb_printf(sb, " goto chain %u", a->chain);
		break;
	case FLOWER_ACT_CONTINUE:
		ctl_sb_printf(sb, " continue");
		break;
	case FLOWER_ACT_PIPE:
		ctl_sb_printf(sb, " pipe");
		break;
	case FLOWER_ACT_TUNNEL_SET:
		ctl_sb_printf(sb, " tunnel_key set id %u", a->vni);
		struct ctl_ip src = fl_ip_to_ctl(&a->src), dst = fl_ip_to_ctl(&a->dst);
		ctl_sb_ip(sb, "src_ip", &src);
		ctl_sb_ip(sb, "dst_ip", &dst);
		if (a->given & FLOWER_AK_DST_PORT)
			ctl_sb_printf(sb, " dst_port %u", a->dst_port);
		if (a->given & FLOWER_AK_CSUM)
			ctl_sb_printf(sb, " csum");
		if (a->given & FLOWER_AK_NOCSUM)
			ctl_sb_printf(sb, " nocsum");
		break;
	case FLOWER_ACT_TUNNEL_UNSET:
		ctl_sb_printf(sb, " tunnel_key unset");
		break;
	case FLOWER_ACT_VLAN_POP:
		ctl_sb_printf(sb, " vlan pop");
		break;
	case FLOWER_ACT_VLAN_PUSH:
	case FLOWER_ACT_VLAN_MODIFY:
		ctl_sb_printf(sb, " vlan %s id %u", a->type == FLOWER_ACT_VLAN_PUSH ? "push" : "modify",
			      a->vlan_id);
		if (a->given & FLOWER_AK_PRIORITY)
			ctl_sb_printf(sb, " priority %u", a->vlan_prio);
		if (a->given & FLOWER_AK_PROTOCOL)
			fl_sb_protocol(sb, "protocol", a->vlan_tpid);
		break;
	}
}

void fl_format_actions(struct ctl_sbuf *sb, const struct flower_spec *f)
{
	for (unsigned int i = 0; i < f->n_actions; i++) {
		ctl_sb_printf(sb, " action");
		print_one(sb, &f->actions[i]);
	}
}
