/* `filter show|get`: the control thread's printing of flower rules, in one
 * reply or, for a client that reads streams (ctl_server_stream_ok()), as a
 * stream.
 *
 * Why a stream: a million rules print as some 300 MB of tc's layout, over
 * the 16 MB a reply may hold, and printing them in one go would hold the
 * daemon's loop for seconds, every other client waiting.  So a show for
 * such a client prints SHOW_TURN_RULES rules per turn into its own
 * printer, sends them as chunks, and gives the loop back; the control
 * server calls again (CTL_STREAM_ROOM) when the client has read enough,
 * so a slow reader gets fewer turns and costs at most
 * CTL_STREAM_MAX_PENDING bytes.  The concatenated chunks are byte for byte
 * what the one reply would have been (the printer keeps its JSON state
 * between chunks, ctl_print_consume()).
 *
 * Consistency: the show holds the table it started on
 * (flower_table_hold()), so it prints one version, every rule once, while
 * batches go on replacing the current table; the counters of `-s` are one
 * snapshot taken at the start, as for a reply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_server.h"
#include "control/vxd_internal.h"
#include "switch/flower_hook.h"
#include "switch/flower_table.h"
#include "util/vlog.h"

enum {
	SHOW_TURN_RULES = 4096,     /* rules printed per turn of the loop */
	SHOW_CHUNK = 256 << 10,     /* bytes sent as one chunk */
	SHOW_STREAM_ABOVE = 2048,   /* rules on a port from which a show streams */
};

struct show {
	struct flower_table *t;     /* held */
	struct ctl_flower req;
	uint16_t port;
	struct flower_counters counters; /* -s: a snapshot, copied */
	bool stats;
	uint64_t now;
	uint32_t kind_n[4];
	const struct flower_rule *prev;
	size_t next, shown;
	/* streamed */
	bool finished;              /* all printed, the printer closed */
	struct ctl_print pr;
	struct ctl_stream *st;
};

/* The rule counters at one instant, summed over every datapath (the
 * workers' copied by SNAPSHOT requests, never read while a worker writes
 * them; the kernel's cache entries' folded). */
static const struct flower_counters *vxd_filter_counters(struct vxd *vxd)
{
	if (!vxd->fcounters && !(vxd->fcounters = calloc(1, sizeof(*vxd->fcounters))))
		return NULL;
	if (flower_counters_reserve(vxd->fcounters, flower_table_n_slots(vxd->flower)) < 0)
		return NULL;
	if (vxd_rule_counters(vxd, vxd->fcounters) < 0)
		return NULL;
	return vxd->fcounters;
}

static uint64_t vxd_secs_since(uint64_t now_ns, uint64_t then_ns)
{
	return now_ns > then_ns ? (now_ns - then_ns) / 1000000000ull : 0;
}

/* The counters of rule r in the snapshot (NULL: none). */
static void vxd_filter_stats(const struct flower_counters *c, const struct flower_rule *r, uint64_t now_ns,
			     struct ctl_flower_stats *st)
{
	struct flower_rule_counters rc = { 0 };
	if (c)
		flower_counters_get(c, r, &rc);
	/* A worker (or the kernel) may stamp a use after now_ns was read:
	 * that is 0 s ago, not 2^64 ns. */
	*st = (struct ctl_flower_stats){
		.installed_sec = vxd_secs_since(now_ns, r->installed_ns),
		.used_sec = rc.last_used_ns ? (int64_t)vxd_secs_since(now_ns, rc.last_used_ns) : -1,
		.fast_packets = rc.fast_packets, .fast_bytes = rc.fast_bytes,
		.slow_packets = rc.slow_packets, .slow_bytes = rc.slow_bytes,
	};
}

/* tc's action index, per kind (mirred, gact, vlan, tunnel_key), counted
 * over the whole table in its order: unique per kind and the same in a
 * show and a get while the table is unchanged. */
static unsigned vxd_filter_act_kind(uint8_t type)
{
	switch (type) {
	case FLOWER_ACT_REDIRECT:
	case FLOWER_ACT_MIRROR:
		return 0;
	case FLOWER_ACT_DROP:
	case FLOWER_ACT_PASS:
	case FLOWER_ACT_GOTO:
	case FLOWER_ACT_CONTINUE:
	case FLOWER_ACT_PIPE:
		return 1;
	case FLOWER_ACT_VLAN_PUSH:
	case FLOWER_ACT_VLAN_POP:
	case FLOWER_ACT_VLAN_MODIFY:
		return 2;
	default:
		return 3;
	}
}

static bool vxd_filter_wanted(const struct flower_rule *r, const struct ctl_flower *f, uint16_t port)
{
	if (f->rule.given & FLOWER_SF_EGRESS) /* the port's egress rules, apart (flower_hook.h) */
		port |= FLOWER_HOOK_EGRESS;
	bool get = f->verb == CTL_FILTER_GET; /* one rule: chain (0 unless given), pref, handle */
	if (r->port != port || ((f->rule.given & FLOWER_SF_CHAIN || get) && r->chain != f->rule.chain))
		return false;
	const struct flower_match *m = &f->rule.match;
	return !get || (r->pref == f->rule.pref && r->handle == f->rule.handle &&
			(!(m->given & FLOWER_FM_PROTOCOL) || r->spec.match.protocol == m->protocol));
}

/* Prints rules [sh->next, sh->next + max) of the table that the request
 * wants; true once the table is done. */
static bool show_rules(struct show *sh, struct ctl_print *out, size_t max)
{
	const struct ctl_flower *f = &sh->req;
	size_t n = sh->t ? flower_table_n_rules(sh->t) : 0, end = sh->next + max < n ? sh->next + max : n;
	for (; sh->next < end; sh->next++) {
		const struct flower_rule *r = flower_table_rule(sh->t, sh->next);
		uint32_t idx[FLOWER_MAX_ACTIONS];
		for (uint32_t a = 0; a < r->spec.n_actions && a < FLOWER_MAX_ACTIONS; a++)
			idx[a] = ++sh->kind_n[vxd_filter_act_kind(r->spec.actions[a].type)];
		if (!vxd_filter_wanted(r, f, sh->port))
			continue;
		sh->shown++;
		/* the request's verb and chain filter: what tc leaves out of its answer */
		struct ctl_flower spec = { .verb = f->verb, .rule = r->spec };
		spec.rule.chain = r->chain, spec.rule.pref = r->pref, spec.rule.handle = r->handle;
		spec.rule.given = (spec.rule.given & ~FLOWER_SF_CHAIN) | (f->rule.given & FLOWER_SF_CHAIN);
		if (f->verb != CTL_FILTER_GET && (!sh->prev || sh->prev->chain != r->chain || sh->prev->pref != r->pref))
			ctl_flower_print_pref(out, &spec); /* the kernel's entry of a new (chain, pref) */
		sh->prev = r;
		struct ctl_flower_stats st;
		if (sh->stats)
			vxd_filter_stats(&sh->counters, r, sh->now, &st);
		if (f->flags & CTL_FF_BRIEF)
			ctl_flower_print_brief(out, &spec, sh->stats ? &st : NULL);
		else
			ctl_flower_print_rule(out, &spec, idx, sh->stats ? &st : NULL);
	}
	return sh->next == n;
}

static void show_free(struct show *sh)
{
	flower_table_destroy(sh->t); /* our hold */
	flower_counters_fini(&sh->counters);
	ctl_print_release(&sh->pr);
	free(sh);
}

/* Sends what the printer holds, in chunks; -ENOBUFS when the client's
 * pending room is full (the rest waits in the printer). */
static int show_send(struct show *sh, size_t keep)
{
	while (ctl_print_len(&sh->pr) > keep) {
		size_t len = ctl_print_len(&sh->pr);
		const char *data = ctl_print_data(&sh->pr);
		size_t off = 0;
		while (off < len) {
			size_t n = len - off < SHOW_CHUNK ? len - off : SHOW_CHUNK;
			int ret = ctl_stream_send(sh->st, data + off, n);
			if (ret < 0) {
				/* keep what is not sent, at the front */
				memmove(sh->pr.buf, data + off, len - off);
				sh->pr.len = len - off;
				sh->pr.buf[sh->pr.len] = '\0';
				return ret;
			}
			off += n;
		}
		ctl_print_consume(&sh->pr);
	}
	return 0;
}

/* One turn: a bounded number of rules, sent; at the table's end, the final
 * reply.  sh is freed, and the stream gone, once it ends. */
static void show_turn(struct show *sh)
{
	int ret = 0;
	if (!sh->finished) {
		ret = show_send(sh, 0); /* what a full room held back */
		if (!ret && show_rules(sh, &sh->pr, SHOW_TURN_RULES)) {
			ctl_print_close_array(&sh->pr);
			ctl_print_finish(&sh->pr);
			sh->finished = true;
		}
		if (!ret)
			ret = sh->pr.err;
	}
	if (!ret)
		ret = show_send(sh, 0);
	if (ret == -ENOBUFS || (!ret && !sh->finished))
		return; /* the rest next turn */
	struct ctl_stream *st = sh->st;
	char line[128] = "";
	enum ctl_status status = CTL_STATUS_OK;
	if (ret < 0) {
		snprintf(line, sizeof(line), "filter show: %s\n", strerror(-ret));
		status = CTL_STATUS_REFUSED;
	}
	show_free(sh);
	ctl_stream_end(st, status, line);
}

static void show_on_stream(void *arg, struct ctl_stream *st, enum ctl_stream_event ev)
{
	struct show *sh = arg;
	if (ev == CTL_STREAM_ROOM) {
		show_turn(sh);
		return;
	}
	show_free(sh);
	if (ev == CTL_STREAM_STOP)
		ctl_stream_end(st, CTL_STATUS_OK, "");
}

static int show_stream_begin(struct vxd *vxd, struct show *sh, const struct ctl_print *out, struct ctl_err *err)
{
	ctl_print_init(&sh->pr, ctl_print_is_json(out), 0);
	sh->st = ctl_server_stream_begin(vxd->ctl, show_on_stream, sh);
	if (!sh->st) {
		show_free(sh);
		return vxd_refuse(err, -ENOMEM, "filter show: cannot stream: out of memory");
	}
	ctl_print_open_array(&sh->pr, NULL);
	ctl_stream_want_room(sh->st, true); /* the first turn comes from the loop */
	return 0;
}

int vxd_filter_show(struct vxd *vxd, const struct ctl_flower *f, struct ctl_print *out, struct ctl_err *err)
{
	uint16_t port_id;
	if (vxd_filter_resolve(vxd, f->rule.dev, &port_id) < 0)
		return vxd_refuse(err, -ENOENT, "dev \"%s\": no such port", f->rule.dev);
	struct show *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return vxd_refuse(err, -ENOMEM, "filter show: out of memory");
	sh->req = *f;
	sh->port = port_id;
	sh->now = vxd_now_ns();
	if ((sh->t = vxd->flower))
		flower_table_hold(sh->t);
	if (f->flags & CTL_FF_STATS) {
		const struct flower_counters *c = vxd_filter_counters(vxd);
		if (!c || flower_counters_reserve(&sh->counters, c->n) < 0) {
			show_free(sh);
			return vxd_refuse(err, -ENOMEM, "filter show -s: out of memory");
		}
		flower_counters_copy(&sh->counters, c);
		sh->stats = true;
	}
	size_t n = sh->t ? flower_table_n_rules(sh->t) : 0;
	if (f->verb == CTL_FILTER_SHOW && n > SHOW_STREAM_ABOVE && ctl_server_stream_ok(vxd->ctl))
		return show_stream_begin(vxd, sh, out, err);
	ctl_print_open_array(out, NULL);
	show_rules(sh, out, n);
	ctl_print_close_array(out);
	size_t shown = sh->shown;
	show_free(sh);
	if (f->verb == CTL_FILTER_GET && !shown)
		return vxd_refuse(err, -ENOENT, "dev %s chain %u pref %u handle %u: no such filter",
				  f->rule.dev, f->rule.chain, f->rule.pref, f->rule.handle);
	return 0;
}
