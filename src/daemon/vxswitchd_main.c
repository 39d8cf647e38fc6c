/* vxswitchd: the vxswitch daemon.  Parses options, builds the switch from a
 * config file (vxctl commands, one per line), then runs the datapath loop
 * in the foreground until SIGINT/SIGTERM. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl/ctl_config.h"
#include "ctl/ctl_print.h"
#include "ctl/ctl_proto.h"
#include "daemon/vxd.h"
#include "switch/fdb.h"

static struct vxd *the_vxd;

static void on_signal(int sig)
{
	(void)sig;
	if (the_vxd)
		vxd_stop(the_vxd);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vxswitchd [-c CONFIG] [-s SOCKET] [-f] [-q] [-p POOL] [-F ENTRIES]\n"
		"  -c, --config FILE    run the vxctl commands in FILE (one per line, # comments)\n"
		"                       before serving; a bad line stops the start\n"
		"  -s, --socket PATH    control socket (default " CTL_DEFAULT_SOCKET ")\n"
		"  -f, --foreground     stay in the foreground (the default; there is no daemon mode)\n"
		"  -q, --quiet          no informational lines on stderr\n"
		"  -p, --pool N         packet buffers, 64..1048576 (default 4096, 64 KB each, touched on use)\n"
		"  -F, --fdb-size N     learned MACs the FDB holds over all VNIs, 1..16776192 (default 65536);\n"
		"                       `set fdb-max` caps each VNI at run time, up to this\n"
		"  -h, --help           this text\n"
		"The datapath is single-threaded: one thread polls every port and the control socket.\n");
}

/* mkdir -p of the socket's directory, 0700. */
static void make_socket_dir(const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	char *dir = dirname(buf);
	for (char *s = dir + 1; *s; s++) {
		if (*s == '/') {
			*s = 0;
			mkdir(dir, 0700);
			*s = '/';
		}
	}
	mkdir(dir, 0700);
}

/* A decimal option value within [min, max], or exit 2 saying what is wrong. */
static uint32_t option_uint(const char *opt, const char *arg, uint32_t min, uint32_t max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		fprintf(stderr, "vxswitchd: %s \"%s\": expected a number %u..%u\n", opt, arg, min, max);
		exit(2);
	}
	return (uint32_t)v;
}

/* The config file, applied to the empty switch: a refused line stops the
 * start (FILE:LINE: why). */
static int run_config(struct vxd *vxd)
{
	struct ctl_print out;
	struct ctl_err err = { 0 };
	ctl_print_init(&out, false, 0);
	int ret = vxd_apply_config(vxd, &out, &err);
	ctl_print_finish(&out);
	if (ret < 0)
		fprintf(stderr, "vxswitchd: %s\n", err.msg[0] ? err.msg : strerror(-ret));
	else
		fputs(ctl_print_data(&out), stderr);
	ctl_print_release(&out);
	return ret;
}

static void on_hangup(int sig)
{
	(void)sig;
	if (the_vxd)
		vxd_request_reload(the_vxd);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, 's' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "pool", required_argument, NULL, 'p' },
		{ "fdb-size", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = NULL;
	struct vxd_options opts = { .ctl_path = CTL_DEFAULT_SOCKET };
	int c;
	while ((c = getopt_long(argc, argv, "c:s:fqp:F:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 's':
			opts.ctl_path = optarg;
			break;
		case 'f':
			break;
		case 'q':
			opts.quiet = true;
			break;
		case 'p':
			opts.pool_size = option_uint("--pool", optarg, 64, 1u << 20);
			break;
		case 'F':
			opts.fdb_size = option_uint("--fdb-size", optarg, 1, FDB_MAX_ENTRIES - FDB_DEFAULT_MAX_STATIC);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	make_socket_dir(opts.ctl_path);
	opts.config_path = config;

	struct vxd *vxd;
	int ret = vxd_create(&opts, &vxd);
	if (ret < 0) {
		fprintf(stderr, "vxswitchd: cannot start: %s\n", strerror(-ret));
		return 1;
	}
	the_vxd = vxd;
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* SIGHUP re-reads the config file (vxctl reload does the same). */
	struct sigaction hup = { .sa_handler = on_hangup };
	sigaction(SIGHUP, &hup, NULL);

	if (config && run_config(vxd) < 0) {
		vxd_destroy(vxd);
		return 1;
	}
	if (!opts.quiet)
		fprintf(stderr, "vxswitchd: ready, control socket %s\n", opts.ctl_path);
	ret = vxd_run(vxd);
	vxd_destroy(vxd);
	return ret < 0 ? 1 : 0;
}
