/* vxctl: the command-line client of vxswitchd.
 *
 *   vxctl [ -s SOCKET ] [ -j ] COMMAND
 *   vxctl [ -s SOCKET ] [ -j ] stats [ port NAME ] --watch [ SECONDS ] [ -c N ]
 *   vxctl [ -s SOCKET ] -batch FILE     (cli/vxctl_batch.h)
 *
 * --watch is vxctl's own: it asks for `-j stats` every SECONDS and prints
 * the rates between two answers (ctl/ctl_watch.h).
 *
 * Options are also read with one dash (getopt_long_only), as iproute2
 * does: `-batch FILE` is tc's spelling; -s, -j, -h stay what they were.
 *
 * The command is checked here with the daemon's own parser first, so a typo
 * gets the same one-line error without a round trip (and without a daemon).
 * Exit status: 0 done, 1 refused (parse error or by the daemon) or
 * findings (diagnose found a problem; its output still on stdout), 2 the
 * daemon cannot be reached, or turned us away ("vxswitchd: too many
 * control clients (64), try again", printed as the daemon words it). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/vxctl_batch.h"
#include "cli/vxctl_capture.h"
#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"
#include "ctl/ctl_watch.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: vxctl [ OPTIONS ] COMMAND\n"
		"\n"
		"OPTIONS := { -s | --socket } PATH   control socket (default %s)\n"
		"         | { -j | --json }          JSON output, like iproute2's -j\n"
		"         | { -h | --help }          this text\n"
		"         | -batch FILE              apply FILE's `filter add|del` lines (# comments,\n"
		"                                    blank lines; - = stdin) as ONE change: all or none\n"
		"\n"
		"%s"
		"\n"
		"%s"
		"    A line of tc's notes works with the leading `tc` replaced by `vxctl`,\n"
		"    except tc's global -s (here the socket): say `filter show -s`.\n"
		"\n"
		"vxctl's own: stats [ port NAME ] --watch [ SECONDS ] [ { -c | --count } N ]\n"
		"    rates over each SECONDS (default 1, 0.1..3600) from two snapshots: per port\n"
		"    pps, Gbit/s, drops/s each way, GRO segments/frame, CPU us/KB; with -j one\n"
		"    JSON object per line; -c N stops after N intervals\n"
		"\n"
		"Exit status: 0 done, 1 command refused (parse error or by the daemon)\n"
		"or diagnose found a problem, 2 cannot reach the daemon.\n",
		CTL_DEFAULT_SOCKET, ctl_cmd_grammar(), ctl_flower_grammar());
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

/* Prints the answer of a call that returned ret; a CTL_STATUS. */
static int print_reply(const char *socket_path, int ret, int status, char *text)
{
	if (ret) {
		fprintf(stderr, "vxctl: cannot reach vxswitchd at %s: %s\n", socket_path,
			strerror(-ret));
		return CTL_STATUS_UNREACHABLE;
	}
	if (status == CTL_STATUS_OK || status == CTL_STATUS_FINDINGS) {
		fputs(text, stdout);
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

/* Sends one command and prints the answer; a CTL_STATUS. */
static int run_command(const char *socket_path, int n_words, const char *const *words, bool json)
{
	int status;
	char *text;
	int ret = ctl_proto_call(socket_path, n_words, words, json, &status, &text);
	if (ret == -E2BIG) {
		fprintf(stderr, "vxctl: command longer than %d bytes\n", CTL_REQ_MAX_BODY);
		return CTL_STATUS_REFUSED;
	}
	return print_reply(socket_path, ret, status, text);
}

/* -batch FILE: checked here, then one batch request. */
static int run_batch(const char *socket_path, const char *file, bool json)
{
	char *batch;
	size_t len;
	int status = vxctl_batch_read(file, &batch, &len);
	if (status != CTL_STATUS_OK)
		return status;
	char *text;
	int ret = ctl_proto_call_batch(socket_path, file, batch, len, json, &status, &text);
	free(batch);
	if (ret == -E2BIG) {
		fprintf(stderr, "vxctl: -batch %s: larger than %d bytes\n", file, CTL_REQ_MAX_BATCH);
		return CTL_STATUS_REFUSED;
	}
	return print_reply(socket_path, ret, status, text);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "batch", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	const char *socket_path = CTL_DEFAULT_SOCKET, *batch = NULL;
	bool json = false;
	int opt;

	/* '+': options end at the first word of the command. */
	while ((opt = getopt_long_only(argc, argv, "+s:jh", options, NULL)) != -1) {
		switch (opt) {
		case 'b':
			batch = optarg;
			break;
		case 's':
			socket_path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return CTL_STATUS_OK;
		default:
			fprintf(stderr, "vxctl: try 'vxctl --help'\n");
			return CTL_STATUS_REFUSED;
		}
	}
	int n_words = argc - optind;
	const char *const *words = (const char *const *)argv + optind;
	if (batch && n_words) {
		fprintf(stderr, "vxctl: -batch %s: the commands come from the file, not \"%s\"\n", batch, words[0]);
		return CTL_STATUS_REFUSED;
	}
	if (batch)
		return run_batch(socket_path, batch, json);
	if (n_words == 0) {
		usage(stderr);
		return CTL_STATUS_REFUSED;
	}

	struct ctl_cmd cmd;
	struct ctl_err err;
	struct ctl_watch_opts wo = { 0 };
	const char *rest[CTL_MAX_WORDS];
	if (!strcmp(words[0], "stats") && n_words <= CTL_MAX_WORDS) {
		if (ctl_watch_args(n_words, words, &wo, rest, &n_words, &err) < 0) {
			fprintf(stderr, "vxctl: %s\n", err.msg);
			return CTL_STATUS_REFUSED;
		}
		words = rest;
	}
	if (ctl_cmd_parse(n_words, words, &cmd, &err)) {
		fprintf(stderr, "vxctl: %s\n", err.msg);
		return CTL_STATUS_REFUSED;
	}
	if (wo.watch)
		return watch(socket_path, &wo, &cmd.port, json);

	if (cmd.verb == CTL_CAPTURE) {
		if (json) {
			fprintf(stderr, "vxctl: capture has no JSON output (-w FILE writes pcap)\n");
			return CTL_STATUS_REFUSED;
		}
		return vxctl_capture(socket_path, n_words, words, &cmd.capture);
	}
	return run_command(socket_path, n_words, words, json);
}
