/* ctl_knob: the run-time knobs and `set KNOB VALUE` (see ctl_parser.h for
 * how the language is split).
 *
 * The knobs themselves are declared once, in ctl_cmd.h's CTL_KNOBS() list,
 * so the enum the daemon switches on, this table and the grammar cannot
 * disagree.  A knob's kind decides its value's spelling: on|off for bool,
 * strict decimal within [min, max] for uint; the daemon gets a value it
 * never has to range-check again. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_cmd_internal.h"

static const struct ctl_knob_info knob_table[CTL_KNOB_COUNT] = {
#define CTL_KNOB_INFO(e, nm, kd, lo, hi, hp) \
	[CTL_KNOB_##e] = { .name = nm, .kind = kd, .min = lo, .max = hi, .help = hp },
	CTL_KNOBS(CTL_KNOB_INFO)
#undef CTL_KNOB_INFO
};

const struct ctl_knob_info *ctl_knob_info(enum ctl_knob knob)
{
	if ((unsigned int)knob >= CTL_KNOB_COUNT)
		return NULL;
	return &knob_table[knob];
}

/* "a, b, c" over every knob, cut (still one line) if it does not fit. */
static void list_knobs(char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (int k = 0; k < CTL_KNOB_COUNT; k++) {
		int n = snprintf(buf + len, size - len, "%s%s", k ? ", " : "", knob_table[k].name);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

int ctl_parse_set(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *name = NULL, *v = NULL;
	int ret = ctl_take_value(ps, "set", "KNOB (see vxctl --help)", &name);
	if (ret)
		return ret;
	int knob;
	for (knob = 0; knob < CTL_KNOB_COUNT; knob++)
		if (!strcmp(knob_table[knob].name, name))
			break;
	if (knob == CTL_KNOB_COUNT) {
		char expected[200];
		list_knobs(expected, sizeof(expected));
		return ctl_fail(ps, ps->pos - 1, "unknown knob, expected one of: %s", expected);
	}
	const struct ctl_knob_info *info = &knob_table[knob];
	cmd->set.knob = (enum ctl_knob)knob;
	if (info->kind == CTL_KNOB_BOOL) {
		bool on = false;
		ret = ctl_parse_onoff(ps, info->name, &on);
		cmd->set.value = on;
	} else {
		char expected[48];
		snprintf(expected, sizeof(expected), "a number %u..%u", info->min, info->max);
		ret = ctl_take_value(ps, info->name, expected, &v);
		if (!ret)
			ret = ctl_parse_u32(ps, info->name, info->min, info->max, &cmd->set.value);
	}
	return ret ? ret : ctl_expect_end(ps, "set");
}

int ctl_format_set(struct ctl_sbuf *sb, const struct ctl_set *set)
{
	const struct ctl_knob_info *info = ctl_knob_info(set->knob);
	if (!info)
		return -EINVAL;
	if (info->kind == CTL_KNOB_BOOL)
		ctl_sb_printf(sb, " %s %s", info->name, set->value ? "on" : "off");
	else
		ctl_sb_printf(sb, " %s %u", info->name, set->value);
	return 0;
}
