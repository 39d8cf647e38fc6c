/* The grammar of `capture` (ctl_cmd.h, struct ctl_capture): its keys in
 * any order, each once, then the tcpdump FILTER, which is every word left
 * (a FILTER is pcap's language, not ours: the daemon's pcap_compile judges
 * it; here only its characters and length are checked). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_cmd_internal.h"

static const char *const dir_words[] = {
	[CTL_CAPTURE_IN] = "in", [CTL_CAPTURE_OUT] = "out", [CTL_CAPTURE_BOTH] = "both",
};

static int dir_of(const char *w)
{
	for (int d = CTL_CAPTURE_IN; d <= CTL_CAPTURE_BOTH; d++)
		if (!strcmp(w, dir_words[d]))
			return d;
	return 0;
}

/* A key seen a second time, or a second word of the same choice. */
static int once(struct ctl_parser *ps, struct ctl_capture *cap, uint32_t flag, const char *what)
{
	if (cap->given & flag)
		return ctl_fail(ps, ps->pos - 1, "%s given twice", what);
	cap->given |= flag;
	return 0;
}

static int parse_file(struct ctl_parser *ps, struct ctl_capture *cap)
{
	const char *v;
	int ret = ctl_take_value(ps, "-w", "FILE (- for stdout)", &v);
	if (ret)
		return ret;
	size_t len = strlen(v);
	if (len == 0 || len >= CTL_PATH_SIZE)
		return ctl_fail(ps, ps->pos - 1, "bad FILE for \"-w\", expected 1..%d characters",
				CTL_PATH_SIZE - 1);
	memcpy(cap->file, v, len + 1);
	return 0;
}

/* Words joined by single spaces; any printable character (blanks inside a
 * word too: `vxctl capture vnet0 "icmp or arp"` is the same filter). */
static int parse_filter(struct ctl_parser *ps, struct ctl_capture *cap)
{
	size_t len = 0;
	for (; !ctl_at_end(ps); ps->pos++) {
		const char *w = ps->argv[ps->pos];
		size_t n = strlen(w);
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)w[i] < 0x20 || (unsigned char)w[i] == 0x7f)
				return ctl_fail(ps, ps->pos, "bad FILTER: control characters");
		if (len + (len ? 1 : 0) + n >= CTL_CAPTURE_FILTER_SIZE)
			return ctl_fail(ps, ps->pos, "FILTER longer than %d characters",
					CTL_CAPTURE_FILTER_SIZE - 1);
		if (len)
			cap->filter[len++] = ' ';
		memcpy(cap->filter + len, w, n + 1);
		len += n;
	}
	return 0;
}

int ctl_parse_capture(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_capture *cap = &cmd->capture;
	int ret = ctl_parse_name(ps, "capture", CTL_NAME_SIZE, false, cap->port);
	if (ret)
		return ret;
	cap->dirs = CTL_CAPTURE_BOTH;
	while (!ctl_at_end(ps)) {
		const char *w = ps->argv[ps->pos++];
		int dir = dir_of(w);
		if (dir) {
			ret = once(ps, cap, CTL_CK_DIR, "direction (in, out or both)");
			cap->dirs = (uint8_t)dir;
		} else if (!strcmp(w, "inner") || !strcmp(w, "outer")) {
			ret = once(ps, cap, CTL_CK_LAYER, "layer (inner or outer)");
			cap->outer = w[0] == 'o';
		} else if (!strcmp(w, "-c")) {
			ret = once(ps, cap, CTL_CK_COUNT, "\"-c\"");
			const char *v;
			if (!ret)
				ret = ctl_take_value(ps, "-c", "COUNT", &v);
			if (!ret)
				ret = ctl_parse_u32(ps, "-c", 1, UINT32_MAX, &cap->count);
		} else if (!strcmp(w, "-w")) {
			ret = once(ps, cap, CTL_CK_FILE, "\"-w\"");
			if (!ret)
				ret = parse_file(ps, cap);
		} else {
			ps->pos--;
			return parse_filter(ps, cap);
		}
		if (ret)
			return ret;
	}
	return 0;
}

int ctl_format_capture(struct ctl_sbuf *sb, const struct ctl_capture *cap)
{
	if (cap->dirs < CTL_CAPTURE_IN || cap->dirs > CTL_CAPTURE_BOTH)
		return -EINVAL;
	ctl_sb_printf(sb, " %s", cap->port);
	if (cap->given & CTL_CK_DIR)
		ctl_sb_printf(sb, " %s", dir_words[cap->dirs]);
	if (cap->given & CTL_CK_LAYER)
		ctl_sb_printf(sb, " %s", cap->outer ? "outer" : "inner");
	if (cap->given & CTL_CK_COUNT)
		ctl_sb_printf(sb, " -c %u", cap->count);
	if (cap->given & CTL_CK_FILE)
		ctl_sb_printf(sb, " -w %s", cap->file);
	if (cap->filter[0])
		ctl_sb_printf(sb, " %s", cap->filter);
	return 0;
}
