/* ctl_flower_print: one rule of `filter show [-s] [-j]`, text and JSON from
 * one printer (see ctl_flower.h). */
#include <inttypes.h>

#include "ctl/ctl_flower.h"
#include "ctl/ctl_print.h"

static void print_path(struct ctl_print *p, const char *key, const char *name, uint64_t packets,
		       uint64_t bytes)
{
	ctl_print_open_object(p, key);
	ctl_print_text(p, "    Sent %s", name);
	ctl_print_uint(p, CTL_PRINT_ANY, "bytes", " %" PRIu64 " bytes", bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "packets", " %" PRIu64 " pkt", packets);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

static void print_stats(struct ctl_print *p, const struct ctl_flower_stats *st)
{
	ctl_print_open_object(p, "stats");
	ctl_print_uint(p, CTL_PRINT_ANY, "installed_sec", "  installed %" PRIu64 " sec",
		       st->installed_sec);
	if (st->used_sec < 0) {
		ctl_print_text(p, " never used");
		ctl_print_string(p, CTL_PRINT_JSON, "used_sec", NULL, NULL);
	} else {
		ctl_print_int(p, CTL_PRINT_ANY, "used_sec", " used %" PRId64 " sec", st->used_sec);
	}
	ctl_print_nl(p);
	ctl_print_text(p, "    Sent");
	ctl_print_uint(p, CTL_PRINT_ANY, "bytes", " %" PRIu64 " bytes",
		       st->fast_bytes + st->slow_bytes);
	ctl_print_uint(p, CTL_PRINT_ANY, "packets", " %" PRIu64 " pkt",
		       st->fast_packets + st->slow_packets);
	ctl_print_nl(p);
	print_path(p, "fast_path", "fast path", st->fast_packets, st->fast_bytes);
	print_path(p, "slow_path", "slow path", st->slow_packets, st->slow_bytes);
	ctl_print_close_object(p);
}

int ctl_flower_print_rule(struct ctl_print *p, const struct ctl_flower *f,
			  const struct ctl_flower_stats *st)
{
	char line[1024];
	int len = ctl_flower_format(f, line, sizeof(line));
	if (len < 0)
		return len;
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "rule", "%s", line);
	ctl_print_nl(p);
	ctl_print_string(p, CTL_PRINT_JSON, "dev", NULL, f->dev);
	ctl_print_uint(p, CTL_PRINT_JSON, "chain", NULL, f->chain);
	ctl_print_uint(p, CTL_PRINT_JSON, "pref", NULL, f->pref);
	ctl_print_uint(p, CTL_PRINT_JSON, "handle", NULL, f->handle);
	if (st)
		print_stats(p, st);
	ctl_print_close_object(p);
	return 0;
}
