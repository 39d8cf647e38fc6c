/* vxctl: the command-line client of vxswitchd.
 *
 *   vxctl [ OPTIONS ] COMMAND
 *   vxctl [ OPTIONS ] stats [ port NAME ] --watch [ SECONDS ] [ -c N ]
 *   vxctl [ --socket PATH ] [ -force ] -batch FILE     (cli/vxctl_batch.h)
 *
 * OPTIONS are tc's global options, read by tc's rules (cli/vxctl_opts.h):
 * `vxctl -s filter show dev vnet0 ingress` is `tc -s filter show ...`.
 * The control socket is --socket PATH or $VXCTL_SOCKET.
 *
 * --watch is vxctl's own: it asks for `-j stats` every SECONDS and prints
 * the rates between two answers (ctl/ctl_watch.h).
 *
 * The command is checked here with the daemon's own parser first, so a typo
 * gets the same one-line error without a round trip (and without a daemon).
 * Exit status: 0 done, 1 refused (parse error or by the daemon) or
 * findings (diagnose found a problem; its output still on stdout), 2 the
 * daemon cannot be reached, or turned us away ("vxswitchd: too many
 * control clients (64), try again", printed as the daemon words it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/vxctl_batch.h"
#include "cli/vxctl_capture.h"
#include "cli/vxctl_opts.h"
#include "cli/vxctl_pretty.h"
#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"
#include "ctl/ctl_watch.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vxctl [ OPTIONS ] COMMAND\n"
		"\n"
		"OPTIONS := tc's, with tc's spellings (one dash, any prefix: -s, -stats, ...)\n"
		"           -s[tatistics]          counters in filter show (repeatable: -s -s)\n"
		"         | -j[son] [ -p[retty] ]  JSON output, like tc's; -p indents it as tc does\n"
		"         | -b[atch] FILE          apply FILE's `filter add|del` lines (# comments,\n"
		"                                  blank lines; - = stdin) as ONE change: all or none\n"
		"         | -f[orce] -b[atch] FILE tc's batch: each line (any command) on its own,\n"
		"                                  go on after a failure (\"Command failed FILE:LINE\"),\n"
		"                                  exit 1 if any line failed\n"
		"         | --socket PATH          control socket (else $%s, else %s)\n"
		"         | -br[ief]               tc's terse filter show (handle, flags, action kinds)\n"
		"         | -h[elp]                this text\n"
		"    filter show and get print tc's layout (-j: tc's JSON); show config the lines.\n"
		"    Refused with the reason: -d[etails] (nothing more to show), -n[etns] (the\n"
		"    socket is a file: use --socket). The old -s PATH is refused with the line\n"
		"    to type instead.\n"
		"\n"
		"%s"
		"\n"
		"%s"
		"    A line of tc's notes works with the leading `tc` replaced by `vxctl`.\n"
		"\n"
		"vxctl's own: stats [ port NAME ] --watch [ SECONDS ] [ { -c | --count } N ]\n"
		"    rates over each SECONDS (default 1, 0.1..3600) from two snapshots: per port\n"
		"    pps, Gbit/s, drops/s each way, GRO segments/frame, CPU us/KB; with -j one\n"
		"    JSON object per line; -c N stops after N intervals\n"
		"\n"
		"Exit status: 0 done, 1 command refused (parse error or by the daemon)\n"
		"or diagnose found a problem, 2 cannot reach the daemon.\n",
		VXCTL_SOCKET_ENV, CTL_DEFAULT_SOCKET, ctl_cmd_grammar(), ctl_flower_grammar());
}

/* One `-j stats` snapshot into *s; a CTL_STATUS. */
static int watch_sample(const char *socket_path, struct ctl_watch_sample *s)
{
	static const char *const words[] = { "stats" };
	int status;
	char *text;
	int ret = ctl_proto_call(socket_path, 1, words, true, &status, &text);
	if (ret) {
		fprintf(stderr, "vxctl: cannot reach vxswitchd at %s: %s\n", socket_path, strerror(-ret));
		return CTL_STATUS_UNREACHABLE;
	}
	struct ctl_err err = { 0 };
	if (status == CTL_STATUS_OK && ctl_watch_parse(text, s, &err) < 0) {
		fprintf(stderr, "vxctl: %s\n", err.msg);
		status = CTL_STATUS_REFUSED;
	} else if (status == CTL_STATUS_UNREACHABLE) {
		fputs(text, stderr); /* the daemon's own "vxswitchd: ..." line */
	} else if (status != CTL_STATUS_OK) {
		fprintf(stderr, "vxctl: %s", text);
	}
	free(text);
	return status;
}

/* Keeps only the port `only` (stats port NAME --watch). */
static void watch_filter(struct ctl_watch_rates *r, const struct ctl_port_ref *only)
{
	unsigned n = 0;
	for (unsigned i = 0; only->has_port && i < r->n_ports; i++)
		if (!strcmp(r->ports[i].name, only->name))
			r->ports[n++] = r->ports[i];
	if (only->has_port)
		r->n_ports = n;
}

static int watch_print(const struct ctl_watch_rates *r, bool json)
{
	struct ctl_print p;
	ctl_print_init(&p, json, 0);
	ctl_watch_print(&p, r);
	int ret = ctl_print_finish(&p);
	/* A terminal gets a refreshing view, a pipe successive blocks. */
	if (!json && isatty(STDOUT_FILENO))
		fputs("\033[H\033[2J", stdout);
	fputs(ctl_print_data(&p), stdout);
	if (!json)
		fputs("\n", stdout);
	ctl_print_release(&p);
	return ret < 0 || fflush(stdout) != 0 ? CTL_STATUS_REFUSED : CTL_STATUS_OK;
}

static void watch_sleep_until(struct timespec *next, double interval_s)
{
	uint64_t ns = (uint64_t)(interval_s * 1e9);
	next->tv_sec += (time_t)(ns / 1000000000ull);
	next->tv_nsec += (long)(ns % 1000000000ull);
	if (next->tv_nsec >= 1000000000L) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR) {
	}
}

static int watch(const char *socket_path, const struct ctl_watch_opts *o, const struct ctl_port_ref *only,
		 bool json)
{
	struct ctl_watch_sample *s = calloc(2, sizeof(*s));
	struct ctl_watch_rates *r = calloc(1, sizeof(*r));
	int status = s && r ? watch_sample(socket_path, &s[0]) : CTL_STATUS_REFUSED;
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (uint32_t n = 0; status == CTL_STATUS_OK && (!o->count || n < o->count); n++) {
		watch_sleep_until(&next, o->interval_s);
		struct ctl_watch_sample *a = &s[n % 2], *b = &s[(n + 1) % 2];
		status = watch_sample(socket_path, b);
		if (status != CTL_STATUS_OK)
			break;
		if (ctl_watch_rates(a, b, r) < 0) {
			fprintf(stderr, "vxctl: the daemon's clock did not advance between two snapshots\n");
			status = CTL_STATUS_REFUSED;
			break;
		}
		watch_filter(r, only);
		status = watch_print(r, json);
	}
	free(s);
	free(r);
	return status;
}

/* The daemon's answer on stdout, indented first under -j -p. */
static void put_answer(const struct vxctl_opts *o, const char *text)
{
	char *pretty;
	if (o->json && o->pretty && vxctl_json_pretty(text, strlen(text), &pretty) == 0) {
		fputs(pretty, stdout);
		free(pretty);
		return;
	}
	fputs(text, stdout);
}

/* Prints the answer of a call that returned ret; a CTL_STATUS. */
static int print_reply(const struct vxctl_opts *o, int ret, int status, char *text)
{
	if (ret) {
		fprintf(stderr, "vxctl: cannot reach vxswitchd at %s: %s\n", o->socket,
			strerror(-ret));
		return CTL_STATUS_UNREACHABLE;
	}
	if (status == CTL_STATUS_OK || status == CTL_STATUS_FINDINGS) {
		put_answer(o, text);
	} else if (status == CTL_STATUS_UNREACHABLE) {
		fputs(text, stderr); /* the daemon's own "vxswitchd: ..." line */
	} else {
		fputs("vxctl: ", stderr);
		fputs(text, stderr);
	}
	free(text);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "vxctl: writing output: %s\n", strerror(errno));
		return CTL_STATUS_REFUSED;
	}
	return status == CTL_STATUS_FINDINGS ? CTL_STATUS_REFUSED : status;
}

/* A streamed answer (filter show of a large table): its chunks go to
 * stdout as they come, or, to be indented under -j -p, are kept and put
 * before the final reply's text. */
struct answer {
	const struct vxctl_opts *o;
	char *kept;
	size_t len;
	int err;
};

static int answer_chunk(void *ctx, const uint8_t *body, size_t size)
{
	struct answer *a = ctx;
	if (!(a->o->json && a->o->pretty)) {
		if (fwrite(body, 1, size, stdout) != size)
			a->err = errno ? errno : EIO;
		return a->err ? -a->err : 0;
	}
	char *kept = realloc(a->kept, a->len + size + 1);
	if (!kept) {
		a->err = ENOMEM;
		return -ENOMEM;
	}
	memcpy(kept + a->len, body, size);
	a->len += size;
	kept[a->len] = '\0';
	a->kept = kept;
	return 0;
}

/* Sends one command and prints the answer; a CTL_STATUS. */
static int run_command(const struct vxctl_opts *o, int n_words, const char *const *words)
{
	int status;
	char *text;
	struct answer a = { .o = o };
	struct ctl_stream_client sc = { .chunk = answer_chunk, .ctx = &a };
	int ret = ctl_proto_call_stream(o->socket, n_words, words, o->json, &sc, &status, &text);
	if (ret == -E2BIG) {
		fprintf(stderr, "vxctl: command longer than %d bytes\n", CTL_REQ_MAX_BODY);
		return CTL_STATUS_REFUSED;
	}
	if (!ret && a.kept) { /* the whole answer, to be indented at once */
		char *all = realloc(a.kept, a.len + strlen(text) + 1);
		if (all) {
			strcpy(all + a.len, text);
			free(text);
			text = all;
			a.kept = NULL;
		}
	}
	free(a.kept);
	if (!ret && a.err) {
		fprintf(stderr, "vxctl: writing output: %s\n", strerror(a.err));
		free(text);
		return CTL_STATUS_REFUSED;
	}
	return print_reply(o, ret, status, text);
}

/* -batch FILE: checked here, then one batch request. */
static int run_batch(const struct vxctl_opts *o)
{
	char *batch;
	size_t len;
	if (o->stats) {
		fprintf(stderr, "vxctl: -s: a -batch without -force holds filter add and del lines "
			"only, nothing to count\n");
		return CTL_STATUS_REFUSED;
	}
	int status = vxctl_batch_read(o->batch, &batch, &len);
	if (status != CTL_STATUS_OK)
		return status;
	char *text;
	int ret = ctl_proto_call_batch(o->socket, o->batch, batch, len, o->json, &status, &text);
	free(batch);
	if (ret == -E2BIG) {
		fprintf(stderr, "vxctl: -batch %s: larger than %d bytes\n", o->batch,
			CTL_REQ_MAX_BATCH);
		return CTL_STATUS_REFUSED;
	}
	return print_reply(o, ret, status, text);
}

/* One command (from argv, or a line of a -force batch): checked with the
 * daemon's own parser, then sent; a CTL_STATUS. */
static int run_words(const struct vxctl_opts *o, bool in_batch, int n_words,
		     const char *const *argv_words)
{
	struct ctl_cmd cmd;
	struct ctl_err err;
	struct ctl_watch_opts wo = { 0 };
	const char *words[CTL_MAX_WORDS + 2], *rest[CTL_MAX_WORDS];
	char why[VXCTL_OPTS_ERR_SIZE];
	if (n_words > CTL_MAX_WORDS) {
		fprintf(stderr, "vxctl: too many words, at most %d\n", CTL_MAX_WORDS);
		return CTL_STATUS_REFUSED;
	}
	n_words = vxctl_opts_apply(o, in_batch, n_words, argv_words, words, why, sizeof(why));
	if (n_words < 0) {
		fprintf(stderr, "vxctl: %s\n", why);
		return CTL_STATUS_REFUSED;
	}
	const char *const *w = words;
	if (!strcmp(w[0], "stats") && n_words <= CTL_MAX_WORDS) {
		if (ctl_watch_args(n_words, w, &wo, rest, &n_words, &err) < 0) {
			fprintf(stderr, "vxctl: %s\n", err.msg);
			return CTL_STATUS_REFUSED;
		}
		w = rest;
	}
	if (ctl_cmd_parse(n_words, w, &cmd, &err)) {
		fprintf(stderr, "vxctl: %s\n", err.msg);
		return CTL_STATUS_REFUSED;
	}
	if (cmd.verb == CTL_DATAPATH) {
		fprintf(stderr, "vxctl: datapath: a start-time setting, not a command: vxswitchd --datapath "
			"kernel|user, or \"datapath kernel|user\" as the config file's first line; restart "
			"vxswitchd to change it (vxctl port show and stats say which runs)\n");
		return CTL_STATUS_REFUSED;
	}
	if ((wo.watch || cmd.verb == CTL_CAPTURE) && in_batch) {
		fprintf(stderr, "vxctl: %s: not in a -batch file (it runs until stopped)\n",
			wo.watch ? "stats --watch" : "capture");
		return CTL_STATUS_REFUSED;
	}
	if (wo.watch && o->pretty) {
		fprintf(stderr, "vxctl: stats --watch -j prints one JSON object per line: "
			"no -pretty\n");
		return CTL_STATUS_REFUSED;
	}
	if (wo.watch)
		return watch(o->socket, &wo, &cmd.port, o->json);
	if (cmd.verb == CTL_CAPTURE) {
		if (o->json) {
			fprintf(stderr, "vxctl: capture has no JSON output (-w FILE writes pcap)\n");
			return CTL_STATUS_REFUSED;
		}
		return vxctl_capture(o->socket, n_words, w, &cmd.capture);
	}
	return run_command(o, n_words, w);
}

static int batch_line(void *ctx, int n, const char *const *words)
{
	return run_words(ctx, true, n, words);
}

int main(int argc, char **argv)
{
	struct vxctl_opts o;
	char why[VXCTL_OPTS_ERR_SIZE];
	if (vxctl_opts_parse(argc, (const char *const *)argv, getenv(VXCTL_SOCKET_ENV), &o, why,
			     sizeof(why)) < 0) {
		fprintf(stderr, "vxctl: %s\n", why);
		return CTL_STATUS_REFUSED;
	}
	if (o.help) {
		usage(stdout);
		return CTL_STATUS_OK;
	}
	int n_words = argc - o.first;
	const char *const *words = (const char *const *)argv + o.first;
	if (o.batch && n_words) {
		fprintf(stderr, "vxctl: -batch %s: the commands come from the file, not \"%s\"\n",
			o.batch, words[0]);
		return CTL_STATUS_REFUSED;
	}
	if (o.batch && o.force)
		return vxctl_batch_force(o.batch, batch_line, &o);
	if (o.batch)
		return run_batch(&o);
	if (n_words == 0) {
		usage(stderr);
		return CTL_STATUS_REFUSED;
	}
	return run_words(&o, false, n_words, words);
}
