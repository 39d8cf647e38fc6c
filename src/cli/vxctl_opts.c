/* vxctl_opts: tc's global options on vxctl (see vxctl_opts.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/vxctl_opts.h"
#include "ctl/ctl_flower.h"
#include "ctl/ctl_proto.h"

/* tc's matches(): arg is a non-empty prefix of name. */
static bool tc_matches(const char *arg, const char *name)
{
	size_t n = strlen(arg);
	return n > 0 && n <= strlen(name) && !strncmp(arg, name, n);
}

static int __attribute__((format(printf, 3, 4))) opt_fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A word the old `-s PATH` would have taken for a socket. */
static bool looks_like_path(const char *w)
{
	size_t n = strlen(w);
	return strchr(w, '/') || (n > 5 && !strcmp(w + n - 5, ".sock"));
}

/* The option's value: argv[*i + 1], or the part after '=' of --name=V. */
static int opt_value(int argc, const char *const *argv, int *i, const char *eq, const char **out,
		     char *err, size_t size)
{
	if (eq) {
		*out = eq + 1;
		return 0;
	}
	if (*i + 1 >= argc)
		return opt_fail(err, size, "%s needs a value", argv[*i]);
	*out = argv[++*i];
	return 0;
}

/* One option at argv[*i]; name is it without its dashes (and without
 * "=VALUE"), in tc's order of tries. */
static int parse_one(int argc, const char *const *argv, int *i, const char *name, const char *eq,
		     struct vxctl_opts *o, char *err, size_t size)
{
	const char *arg = argv[*i];
	if (tc_matches(name, "stats") || tc_matches(name, "statistics")) {
		if (*i + 1 < argc && looks_like_path(argv[*i + 1]))
			return opt_fail(err, size,
					"%s is tc's -statistics now, not the control socket: type "
					"--socket %s (or set %s=%s)",
					arg, argv[*i + 1], VXCTL_SOCKET_ENV, argv[*i + 1]);
		o->stats++;
	} else if (tc_matches(name, "details")) {
		return opt_fail(err, size, "%s (tc's -details) refused: tc's flower output has no "
				"more detail than vxctl prints without it", arg);
	} else if (tc_matches(name, "pretty")) {
		o->pretty = true;
	} else if (tc_matches(name, "help")) {
		o->help = true;
	} else if (tc_matches(name, "force")) {
		o->force = true;
	} else if (tc_matches(name, "batch")) {
		return opt_value(argc, argv, i, eq, &o->batch, err, size);
	} else if (tc_matches(name, "netns")) {
		return opt_fail(err, size, "%s refused: vxctl reaches vxswitchd through a socket in "
				"the filesystem, which no network namespace scopes (a port's "
				"namespace is its own `netns NS`); name the daemon with "
				"--socket PATH", arg);
	} else if (tc_matches(name, "json")) {
		o->json = true;
	} else if (tc_matches(name, "brief")) {
		o->brief = true;
	} else if (strlen(name) >= 2 && tc_matches(name, "socket")) {
		return opt_value(argc, argv, i, eq, &o->socket, err, size);
	} else {
		return opt_fail(err, size, "option \"%s\" is unknown, try \"vxctl -help\"", arg);
	}
	if (eq)
		return opt_fail(err, size, "%s takes no value", arg);
	return 0;
}

int vxctl_opts_parse(int argc, const char *const *argv, const char *env_socket,
		     struct vxctl_opts *o, char *err, size_t err_size)
{
	memset(o, 0, sizeof(*o));
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *name = argv[i] + 1 + (argv[i][1] == '-');
		char bare[32];
		const char *eq = strchr(name, '=');
		if (!eq)
			eq = NULL;
		snprintf(bare, sizeof(bare), "%.*s", eq ? (int)(eq - name) : (int)strlen(name), name);
		int ret = parse_one(argc, argv, &i, bare, eq, o, err, err_size);
		if (ret)
			return ret;
	}
	o->first = i;
	if (!o->socket)
		o->socket = env_socket && *env_socket ? env_socket : CTL_DEFAULT_SOCKET;
	if (!*o->socket)
		return opt_fail(err, err_size, "--socket: empty path");
	if (o->pretty && !o->json)
		return opt_fail(err, err_size, "-pretty indents JSON output: give -json too");
	if (o->force && !o->batch)
		return opt_fail(err, err_size, "-force goes on after a failed line of -batch FILE: "
				"give -batch too");
	return 0;
}

/* The verbs whose answer has counters: show (list, ls, ...) and get. */
static bool is_show(const char *w)
{
	enum ctl_flower_verb v = ctl_flower_parse_verb(w);
	return v == CTL_FILTER_SHOW || v == CTL_FILTER_GET;
}

int vxctl_opts_apply(const struct vxctl_opts *o, bool in_batch, int n, const char *const *in,
		     const char **out, char *err, size_t err_size)
{
	memcpy(out, in, (size_t)n * sizeof(*out));
	bool show = n >= 2 && !strcmp(in[0], "filter") && is_show(in[1]);
	bool dump = show && ctl_flower_parse_verb(in[1]) == CTL_FILTER_SHOW;
	if (o->brief && !dump && !in_batch)
		return opt_fail(err, err_size, "-br (brief) refused: tc's terse dump is filter show's only; "
				"filter get and the other commands have no terse form");
	if (o->stats && !show && !in_batch)
		return opt_fail(err, err_size, "-s (statistics) adds counters to filter show and get only; "
				"the switch's counters are `vxctl stats`");
	int pos = 2;
	if (o->stats && show && !(n > 2 && (!strcmp(in[2], "-s") || !strcmp(in[2], "-stats")))) {
		memmove(out + pos + 1, out + pos, (size_t)(n - pos) * sizeof(*out));
		out[pos] = "-s";
		n++;
	}
	if (show && n > pos && (!strcmp(out[pos], "-s") || !strcmp(out[pos], "-stats")))
		pos++;
	if (o->brief && dump && !(n > pos && (!strcmp(out[pos], "-br") || !strcmp(out[pos], "-brief")))) {
		memmove(out + pos + 1, out + pos, (size_t)(n - pos) * sizeof(*out));
		out[pos] = "-br";
		n++;
	}
	return n;
}
