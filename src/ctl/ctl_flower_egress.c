/* ctl_flower_egress: the words that say where a rule sits and where its
 * frames came from: the hook (`ingress` | `egress`, tc's clsact parents
 * ffff:fff2 and ffff:fff3) and flower's `indev NAME` (TCA_FLOWER_INDEV),
 * parsed, printed back canonically, and printed in tc's layout.
 *
 * Kept apart from ctl_flower.c and ctl_flower_match.c so that the hook and
 * indev stay one change: the grammar files only call in here.
 *
 * tc's rules kept:
 * - `egress` is a parent like `ingress`, in the same place of the line
 *   (tc_filter.c: either one, once).
 * - `indev` is a flower option taken anywhere among the keys
 *   (f_flower.c: check_ifname(), then the kernel's tcf_change_indev(),
 *   which refuses a device that does not exist: here a name that is not a
 *   port, at add, by the daemon).  flower_print_opt() prints it on its own
 *   line after the handle, before the keys, and outside "keys" in JSON. */
#include <string.h>

#include "ctl/ctl_flower_internal.h"
#include "ctl/ctl_print.h"

int fl_take_hook(struct ctl_parser *ps, struct flower_spec *f)
{
	if (!ctl_at_end(ps) && !strcmp(ps->argv[ps->pos], "ingress")) {
		ps->pos++;
		return 0;
	}
	if (!ctl_at_end(ps) && !strcmp(ps->argv[ps->pos], "egress")) {
		f->given |= FLOWER_SF_EGRESS;
		ps->pos++;
		return 0;
	}
	return ctl_fail(ps, ps->pos, "expected \"ingress\" or \"egress\": rules sit on a port's "
			"ingress or egress (no parent, root or other qdisc)");
}

const char *fl_hook_name(const struct flower_spec *f)
{
	return (f->given & FLOWER_SF_EGRESS) ? "egress" : "ingress";
}

int fl_parse_indev(struct ctl_parser *ps, struct flower_match *m)
{
	int word = ps->pos++;
	if (m->given & FLOWER_FM_INDEV)
		return ctl_fail(ps, word, "duplicate \"indev\"");
	int ret = ctl_parse_name(ps, "indev", CTL_NAME_SIZE, false, m->indev);
	if (ret)
		return ret;
	m->given |= FLOWER_FM_INDEV;
	return 0;
}

void fl_format_indev(struct ctl_sbuf *sb, const struct flower_match *m)
{
	if (m->given & FLOWER_FM_INDEV)
		ctl_sb_printf(sb, " indev %s", m->indev);
}

void fl_tc_print_indev(struct ctl_print *p, const struct flower_match *m)
{
	if (!(m->given & FLOWER_FM_INDEV))
		return;
	ctl_print_string(p, CTL_PRINT_ANY, "indev", "\n  indev %s", m->indev);
}
