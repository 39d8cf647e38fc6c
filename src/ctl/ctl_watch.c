/* Live rates from two `-j stats` answers (ctl_watch.h). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_print.h"
#include "ctl/ctl_watch.h"
#include "packet/drop_reason.h"

static int watch_refuse(struct ctl_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int watch_refuse(struct ctl_err *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A refused word: err->word is its 1-based position, as ctl_cmd_parse sets it. */
#define watch_refuse_at(err, w, ...) ((err)->word = (w), watch_refuse((err), __VA_ARGS__))

static bool parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return false;
	*out = v;
	return true;
}

int ctl_watch_args(int n, const char *const *words, struct ctl_watch_opts *o, const char **rest, int *n_rest,
		   struct ctl_err *err)
{
	*o = (struct ctl_watch_opts){ .interval_s = 1.0 };
	bool has_count = false;
	*n_rest = 0;
	for (int i = 0; i < n; i++) {
		const char *w = words[i];
		if (!strcmp(w, "--watch")) {
			if (o->watch)
				return watch_refuse_at(err, i + 1, "word %d \"%s\": given twice", i + 1, w);
			o->watch = true;
			double v;
			if (i + 1 < n && words[i + 1][0] >= '0' && words[i + 1][0] <= '9') {
				if (!parse_number(words[i + 1], 0.1, CTL_WATCH_MAX_SECONDS, &v))
					return watch_refuse_at(err, i + 2, "word %d \"%s\": expected SECONDS 0.1..%d", i + 2,
							    words[i + 1], CTL_WATCH_MAX_SECONDS);
				o->interval_s = v;
				i++;
			}
		} else if (!strcmp(w, "-c") || !strcmp(w, "--count")) {
			double v;
			if (has_count)
				return watch_refuse_at(err, i + 1, "word %d \"%s\": given twice", i + 1, w);
			if (i + 1 >= n || !parse_number(words[i + 1], 1, CTL_WATCH_MAX_COUNT, &v) || v != (uint32_t)v)
				return watch_refuse_at(err, i + 1, "word %d \"%s\": expected a count 1..%d after it", i + 1, w,
						    CTL_WATCH_MAX_COUNT);
			o->count = (uint32_t)v;
			has_count = true;
			i++;
		} else {
			rest[(*n_rest)++] = w;
		}
	}
	if (has_count && !o->watch)
		return watch_refuse(err, "-c/--count goes with --watch");
	return 0;
}

/* ---- parsing ----------------------------------------------------------------- */

/* Reasons met on the way out of a port (sending, segmenting, queueing);
 * every other reason is met on the way in. */
static bool drop_is_tx(const char *name)
{
	static const enum drop_reason tx[] = {
		DROP_MTU_EXCEEDED, DROP_NO_BUFFER, DROP_TX_ERROR, DROP_PORT_LINK_DOWN,
		DROP_GSO_UNSUPPORTED, DROP_GSO_NO_BUFFER, DROP_UNDERLAY_BACKLOG_FULL,
	};
	for (size_t i = 0; i < sizeof(tx) / sizeof(tx[0]); i++)
		if (!strcmp(name, drop_reason_name(tx[i])))
			return true;
	return false;
}

static int get_u64(json_t *obj, const char *key, uint64_t *out, const char *where, struct ctl_err *err)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return watch_refuse(err, "stats answer: %s%s: not a counter", where, key);
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int parse_port(json_t *jp, struct ctl_watch_port *wp, struct ctl_err *err)
{
	json_t *name = json_object_get(jp, "name");
	if (!json_is_string(name))
		return watch_refuse(err, "stats answer: ports[].name: not a string");
	snprintf(wp->name, sizeof(wp->name), "%s", json_string_value(name));
	uint64_t vni;
	int ret = get_u64(jp, "vni", &vni, "ports[].", err);
	ret = ret ? ret : get_u64(jp, "rx_frames", &wp->rx_frames, "ports[].", err);
	ret = ret ? ret : get_u64(jp, "rx_bytes", &wp->rx_bytes, "ports[].", err);
	ret = ret ? ret : get_u64(jp, "tx_frames", &wp->tx_frames, "ports[].", err);
	ret = ret ? ret : get_u64(jp, "tx_bytes", &wp->tx_bytes, "ports[].", err);
	if (ret)
		return ret;
	wp->vni = (uint32_t)vni;
	json_t *drops = json_object_get(jp, "drops");
	if (!json_is_object(drops))
		return watch_refuse(err, "stats answer: ports[].drops: not an object");
	const char *reason;
	json_t *v;
	json_object_foreach(drops, reason, v) {
		uint64_t n;
		if ((ret = get_u64(drops, reason, &n, "ports[].drops.", err)))
			return ret;
		*(drop_is_tx(reason) ? &wp->tx_drops : &wp->rx_drops) += n;
	}
	return 0;
}

/* workers.list[] (an answer without it, from an older daemon: none). */
static int parse_workers(json_t *root, struct ctl_watch_sample *s, struct ctl_err *err)
{
	json_t *list = json_object_get(json_object_get(root, "workers"), "list");
	if (!list)
		return 0;
	if (!json_is_array(list) || json_array_size(list) > CTL_WATCH_MAX_WORKERS)
		return watch_refuse(err, "stats answer: workers.list: not an array of at most %d", CTL_WATCH_MAX_WORKERS);
	size_t i;
	json_t *jw;
	int ret = 0;
	json_array_foreach(list, i, jw) {
		struct ctl_watch_worker *w = &s->workers[i];
		uint64_t user = 0, sys = 0;
		ret = ret ? ret : get_u64(jw, "index", &w->index, "workers.list[].", err);
		ret = ret ? ret : get_u64(jw, "rx_frames", &w->rx_frames, "workers.list[].", err);
		ret = ret ? ret : get_u64(jw, "rx_bytes", &w->rx_bytes, "workers.list[].", err);
		ret = ret ? ret : get_u64(jw, "user_us", &user, "workers.list[].", err);
		ret = ret ? ret : get_u64(jw, "sys_us", &sys, "workers.list[].", err);
		w->cpu_us = user + sys;
	}
	s->n_workers = (unsigned)json_array_size(list);
	return ret;
}

static int parse_root(json_t *root, struct ctl_watch_sample *s, struct ctl_err *err)
{
	json_t *ports = json_object_get(root, "ports");
	if (!json_is_array(ports) || json_array_size(ports) > CTL_WATCH_MAX_PORTS)
		return watch_refuse(err, "stats answer: ports: not an array of at most %d", CTL_WATCH_MAX_PORTS);
	int ret = get_u64(root, "time_ns", &s->time_ns, "", err);
	size_t i;
	json_t *jp;
	json_array_foreach(ports, i, jp) {
		if (ret == 0)
			ret = parse_port(jp, &s->ports[i], err);
	}
	s->n_ports = (unsigned)json_array_size(ports);
	json_t *gro = json_object_get(root, "gro"), *cpu = json_object_get(root, "cpu");
	uint64_t user = 0, sys = 0, wuser = 0, wsys = 0;
	ret = ret ? ret : get_u64(gro, "segments_in", &s->gro_segments_in, "gro.", err);
	ret = ret ? ret : get_u64(gro, "frames_out", &s->gro_frames_out, "gro.", err);
	ret = ret ? ret : get_u64(cpu, "user_us", &user, "cpu.", err);
	ret = ret ? ret : get_u64(cpu, "sys_us", &sys, "cpu.", err);
	ret = ret ? ret : get_u64(cpu, "worker_user_us", &wuser, "cpu.", err);
	ret = ret ? ret : get_u64(cpu, "worker_sys_us", &wsys, "cpu.", err);
	ret = ret ? ret : get_u64(cpu, "rx_bytes", &s->rx_bytes, "cpu.", err);
	s->cpu_us = user + sys;
	s->worker_cpu_us = wuser + wsys;
	return ret ? ret : parse_workers(root, s, err);
}

int ctl_watch_parse(const char *json, struct ctl_watch_sample *s, struct ctl_err *err)
{
	json_error_t jerr;
	memset(s, 0, sizeof(*s));
	json_t *root = json_loads(json, 0, &jerr);
	if (!root)
		return watch_refuse(err, "stats answer: not JSON (line %d: %s)", jerr.line, jerr.text);
	int ret = json_is_object(root) ? parse_root(root, s, err) : watch_refuse(err, "stats answer: not an object");
	json_decref(root);
	return ret;
}

/* ---- arithmetic ---------------------------------------------------------------- */

static uint64_t delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : b;
}

/* The port of the same name in s, looked for first where it was (ports
 * come in id order, so it usually is). */
static const struct ctl_watch_port *find_port(const struct ctl_watch_sample *s, unsigned at, const char *name)
{
	if (at < s->n_ports && !strcmp(s->ports[at].name, name))
		return &s->ports[at];
	for (unsigned i = 0; i < s->n_ports; i++)
		if (!strcmp(s->ports[i].name, name))
			return &s->ports[i];
	return NULL;
}

static double ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0.0;
}

int ctl_watch_rates(const struct ctl_watch_sample *a, const struct ctl_watch_sample *b, struct ctl_watch_rates *r)
{
	if (b->time_ns <= a->time_ns)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->time_ns = b->time_ns;
	r->interval_s = (double)(b->time_ns - a->time_ns) / 1e9;
	static const struct ctl_watch_port zero;
	for (unsigned i = 0; i < b->n_ports; i++) {
		const struct ctl_watch_port *pb = &b->ports[i], *pa = find_port(a, i, pb->name);
		/* Counters that went back: deleted and added again. */
		if (!pa || pa->rx_frames > pb->rx_frames || pa->tx_frames > pb->tx_frames)
			pa = &zero;
		struct ctl_watch_port_rates *pr = &r->ports[r->n_ports++];
		memcpy(pr->name, pb->name, sizeof(pr->name));
		pr->vni = pb->vni;
		struct ctl_watch_port *d = &pr->delta;
		*d = (struct ctl_watch_port){
			.vni = pb->vni,
			.rx_frames = delta(pa->rx_frames, pb->rx_frames), .rx_bytes = delta(pa->rx_bytes, pb->rx_bytes),
			.tx_frames = delta(pa->tx_frames, pb->tx_frames), .tx_bytes = delta(pa->tx_bytes, pb->tx_bytes),
			.rx_drops = delta(pa->rx_drops, pb->rx_drops), .tx_drops = delta(pa->tx_drops, pb->tx_drops),
		};
		memcpy(d->name, pb->name, sizeof(d->name));
		pr->rx_pps = (double)d->rx_frames / r->interval_s;
		pr->tx_pps = (double)d->tx_frames / r->interval_s;
		pr->rx_gbps = (double)d->rx_bytes * 8.0 / 1e9 / r->interval_s;
		pr->tx_gbps = (double)d->tx_bytes * 8.0 / 1e9 / r->interval_s;
		pr->rx_drops_ps = (double)d->rx_drops / r->interval_s;
		pr->tx_drops_ps = (double)d->tx_drops / r->interval_s;
	}
	r->gro_segments_per_frame = ratio(delta(a->gro_segments_in, b->gro_segments_in),
					  delta(a->gro_frames_out, b->gro_frames_out));
	uint64_t kb_x1024 = delta(a->rx_bytes, b->rx_bytes);
	r->cpu_us_per_kb = ratio(delta(a->cpu_us, b->cpu_us) * 1024, kb_x1024);
	r->worker_cpu_us_per_kb = ratio(delta(a->worker_cpu_us, b->worker_cpu_us) * 1024, kb_x1024);
	for (unsigned i = 0; i < b->n_workers; i++) {
		const struct ctl_watch_worker *wb = &b->workers[i];
		static const struct ctl_watch_worker none;
		const struct ctl_watch_worker *wa = i < a->n_workers && a->workers[i].index == wb->index ? &a->workers[i] : &none;
		struct ctl_watch_worker_rates *wr = &r->workers[r->n_workers++];
		uint64_t frames = delta(wa->rx_frames, wb->rx_frames), bytes = delta(wa->rx_bytes, wb->rx_bytes);
		uint64_t cpu = delta(wa->cpu_us, wb->cpu_us);
		*wr = (struct ctl_watch_worker_rates){
			.index = wb->index,
			.rx_frames = frames,
			.rx_pps = (double)frames / r->interval_s,
			.rx_gbps = (double)bytes * 8.0 / 1e9 / r->interval_s,
			.busy = (double)cpu / 1e6 / r->interval_s,
			.us_per_kb = ratio(cpu * 1024, bytes),
		};
	}
	return 0;
}

/* ---- printing -------------------------------------------------------------------- */

static void print_port(struct ctl_print *p, const struct ctl_watch_port_rates *pr)
{
	ctl_print_open_object(p, NULL);
	ctl_print_string(p, CTL_PRINT_ANY, "name", "%-15s", pr->name);
	ctl_print_uint(p, CTL_PRINT_ANY, "vni", " %8" PRIu64, pr->vni);
	ctl_print_float(p, CTL_PRINT_ANY, "rx_pps", " %12.0f", pr->rx_pps);
	ctl_print_float(p, CTL_PRINT_ANY, "rx_gbps", " %9.3f", pr->rx_gbps);
	ctl_print_float(p, CTL_PRINT_ANY, "rx_drops_ps", " %10.0f", pr->rx_drops_ps);
	ctl_print_float(p, CTL_PRINT_ANY, "tx_pps", " %12.0f", pr->tx_pps);
	ctl_print_float(p, CTL_PRINT_ANY, "tx_gbps", " %9.3f", pr->tx_gbps);
	ctl_print_float(p, CTL_PRINT_ANY, "tx_drops_ps", " %10.0f", pr->tx_drops_ps);
	ctl_print_uint(p, CTL_PRINT_JSON, "rx_frames", NULL, pr->delta.rx_frames);
	ctl_print_uint(p, CTL_PRINT_JSON, "rx_bytes", NULL, pr->delta.rx_bytes);
	ctl_print_uint(p, CTL_PRINT_JSON, "rx_drops", NULL, pr->delta.rx_drops);
	ctl_print_uint(p, CTL_PRINT_JSON, "tx_frames", NULL, pr->delta.tx_frames);
	ctl_print_uint(p, CTL_PRINT_JSON, "tx_bytes", NULL, pr->delta.tx_bytes);
	ctl_print_uint(p, CTL_PRINT_JSON, "tx_drops", NULL, pr->delta.tx_drops);
	ctl_print_nl(p);
	ctl_print_close_object(p);
}

void ctl_watch_print(struct ctl_print *p, const struct ctl_watch_rates *r)
{
	ctl_print_open_object(p, NULL);
	ctl_print_uint(p, CTL_PRINT_JSON, "time_ns", NULL, r->time_ns);
	ctl_print_float(p, CTL_PRINT_ANY, "interval_s", "interval %.3f s:", r->interval_s);
	ctl_print_float(p, CTL_PRINT_ANY, "gro_segments_per_frame", " gro %.1f segments/frame",
			r->gro_segments_per_frame);
	ctl_print_float(p, CTL_PRINT_ANY, "cpu_us_per_kb", ", cpu %.3f us/KB received", r->cpu_us_per_kb);
	ctl_print_float(p, CTL_PRINT_ANY, "worker_cpu_us_per_kb", " (worker %.3f)", r->worker_cpu_us_per_kb);
	ctl_print_nl(p);
	ctl_print_text(p, "%-15s %8s %12s %9s %10s %12s %9s %10s\n", "port", "vni", "rx pps", "rx Gb/s", "rx drop/s",
		       "tx pps", "tx Gb/s", "tx drop/s");
	ctl_print_open_array(p, "ports");
	for (unsigned i = 0; i < r->n_ports; i++)
		print_port(p, &r->ports[i]);
	ctl_print_close_array(p);
	ctl_print_text(p, "%-15s %12s %9s %8s %10s\n", "worker", "read pps", "Gb/s", "busy %", "us/KB");
	ctl_print_open_array(p, "workers");
	for (unsigned i = 0; i < r->n_workers; i++) {
		const struct ctl_watch_worker_rates *wr = &r->workers[i];
		ctl_print_open_object(p, NULL);
		ctl_print_uint(p, CTL_PRINT_ANY, "index", "worker %-8" PRIu64, wr->index);
		ctl_print_float(p, CTL_PRINT_ANY, "rx_pps", " %12.0f", wr->rx_pps);
		ctl_print_float(p, CTL_PRINT_ANY, "rx_gbps", " %9.3f", wr->rx_gbps);
		ctl_print_float(p, CTL_PRINT_ANY, "busy_pct", " %8.1f", wr->busy * 100.0);
		ctl_print_float(p, CTL_PRINT_ANY, "us_per_kb", " %10.3f", wr->us_per_kb);
		ctl_print_uint(p, CTL_PRINT_JSON, "rx_frames", NULL, wr->rx_frames);
		ctl_print_nl(p);
		ctl_print_close_object(p);
	}
	ctl_print_close_array(p);
	ctl_print_close_object(p);
}
