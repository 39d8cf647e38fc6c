/* vxswitchd: the vxswitch daemon.  Parses options, builds the switch from a
 * config file (vxctl commands, one per line), gives up root if told to
 * (--user, --group: control/privs.h), then serves in the foreground until
 * SIGINT/SIGTERM; SIGHUP re-reads the config file. */
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
#include "control/placement.h"
#include "ctl/ctl_proto.h"
#include "control/privs.h"
#include "control/kdp_ports.h"
#include "control/vxd.h"
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
		"usage: vxswitchd [-c CONFIG] [-s SOCKET] [-u USER] [-g GROUP] [-f] [-q] [-p POOL] [-F ENTRIES]\n"
		"                 [-m ADDR:PORT] [-w N] [--cpus LIST] [--underlay DEV] [--datapath kernel|user]\n"
		"                 [--keep-datapath] [--cleanup] [--bpffs DIR]\n"
		"  -c, --config FILE    run the vxctl commands in FILE (one per line, # comments)\n"
		"                       before serving; a bad line stops the start\n"
		"  -s, --socket PATH    control socket (default " CTL_DEFAULT_SOCKET ")\n"
		"  -f, --foreground     stay in the foreground (the default; there is no daemon mode)\n"
		"  -q, --quiet          no informational lines on stderr\n"
		"  -p, --pool N         packet buffers, 64..1048576 (default 4096, 64 KB each, touched on use)\n"
		"  -F, --fdb-size N     learned MACs the FDB holds over all VNIs, 1..16776192 (default 65536);\n"
		"                       `set fdb-max` caps each VNI at run time, up to this; as many\n"
		"                       remote MACs from BGP EVPN again, counted apart (docs/EVPN.md)\n"
		"  -u, --user USER      after start-up (config applied, control socket created) run as\n"
		"                       USER, keeping only CAP_NET_ADMIN and CAP_SYS_ADMIN (run-time\n"
		"                       port add/del, reload); needs root\n"
		"  -g, --group GROUP    run as group GROUP (default: USER's) and make the control\n"
		"                       socket mode 0660 group GROUP, so GROUP's members can use vxctl\n"
		"  -m, --metrics ADDR:PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
		"                       (IPv6: [ADDR]:PORT; numeric address, port 1..65535)\n"
		"  -w, --workers N      datapath workers, 1..16 (default: one per allowed CPU of the\n"
		"                       underlay device's NUMA node, or of the machine without one)\n"
		"      --cpus LIST      pin worker i to the i-th CPU of LIST (e.g. 0-3,6)\n"
		"      --datapath kernel|user  kernel: afpacket, veth and vxlan ports on eBPF programs\n"
		"                       (tc ingress, a collect_md vxlan device); taps work beside it\n"
		"                       on the userspace datapath through the slow path (a veth pair\n"
		"                       vxslVNI per VNI with taps); when the programs do not load,\n"
		"                       the userspace datapath, reason logged and shown by stats and\n"
		"                       diagnose.  Default: CONFIG's first line `datapath kernel|user`,\n"
		"                       else kernel where it loads and takes CONFIG (else user, and\n"
		"                       why); --datapath wins over the line\n"
		"      --keep-datapath  kernel datapath: its programs, maps and devices outlive\n"
		"                       vxswitchd (pinned in /sys/fs/bpf/vxswitch), so VMs keep\n"
		"                       talking while it is stopped or restarted; the next start\n"
		"                       with --keep-datapath adopts them and removes what CONFIG\n"
		"                       (needed) no longer names\n"
		"      --cleanup        remove the kernel datapath state a --keep-datapath run left\n"
		"                       (its veth pairs, programs, maps, device) and exit\n"
		"      --bpffs DIR      the bpffs where that state is pinned (default /sys/fs/bpf;\n"
		"                       under `ip netns exec`, whose /sys is its own, one outside /sys)\n"
		"      --underlay DEV   the device whose NUMA node the workers go on (default: the\n"
		"                       link of the first vxlan port's local address in CONFIG)\n"
		"  -h, --help           this text\n"
		"SIGHUP (or vxctl reload) re-reads CONFIG and applies the difference; SIGINT/SIGTERM stop.\n"
		"Threads: a control thread (socket, commands, config) and the datapath workers.\n"
		"$VXSWITCH_SYSFS names another root than /sys for the NUMA information (tests).\n"
		"Exit status: 0 stopped by a signal, 1 start-up or run failure, 2 bad option.\n");
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
/* The config file applied; on failure err says why (not printed). */
static int run_config(struct vxd *vxd, struct ctl_err *err)
{
	struct ctl_print out;
	ctl_print_init(&out, false, 0);
	int ret = vxd_apply_config(vxd, &out, err);
	ctl_print_finish(&out);
	if (ret < 0 && !err->msg[0])
		snprintf(err->msg, sizeof(err->msg), "%s", strerror(-ret));
	else if (ret == 0)
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

struct cmdline {
	struct vxd_options opts;
	const char *user, *group;
	const char *metrics;
	bool cleanup;
};

static const struct option longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "socket", required_argument, NULL, 's' },
	{ "user", required_argument, NULL, 'u' },
	{ "group", required_argument, NULL, 'g' },
	{ "foreground", no_argument, NULL, 'f' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "pool", required_argument, NULL, 'p' },
	{ "fdb-size", required_argument, NULL, 'F' },
	{ "metrics", required_argument, NULL, 'm' },
	{ "workers", required_argument, NULL, 'w' },
	{ "cpus", required_argument, NULL, 'C' },
	{ "underlay", required_argument, NULL, 'U' },
	{ "datapath", required_argument, NULL, 'D' },
	{ "keep-datapath", no_argument, NULL, 'K' },
	{ "cleanup", no_argument, NULL, 'X' },
	{ "bpffs", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option (getopt's C, its argument ARG) into *cl; exits 0 after
 * --help, 2 on a bad option or value. */
static void apply_option(int c, const char *arg, struct cmdline *cl)
{
	struct vxd_options *o = &cl->opts;
	switch (c) {
	case 'c': o->config_path = arg; break;
	case 's': o->ctl_path = arg; break;
	case 'u': cl->user = arg; break;
	case 'g': cl->group = arg; break;
	case 'f': break;
	case 'q': o->quiet = true; break;
	case 'p': o->pool_size = option_uint("--pool", arg, 64, 1u << 20); break;
	case 'F':
		o->fdb_size = option_uint("--fdb-size", arg, 1, FDB_MAX_ENTRIES - FDB_DEFAULT_MAX_STATIC);
		break;
	case 'm': cl->metrics = arg; break;
	case 'w': o->workers = option_uint("--workers", arg, 1, VXD_PLACEMENT_MAX); break;
	case 'C': o->cpus = arg; break;
	case 'U': o->underlay = arg; break;
	case 'D':
		if (strcmp(arg, "kernel") && strcmp(arg, "user")) {
			fprintf(stderr, "vxswitchd: --datapath \"%s\": expected kernel or user\n", arg);
			exit(2);
		}
		o->datapath = arg;
		o->datapath_cmdline = true;
		break;
	case 'K': o->keep_datapath = true; break;
	case 'X': cl->cleanup = true; break;
	case 'B': o->bpffs = arg; break;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		exit(2);
	}
}

/* The config file's `datapath` line (its first, ctl_config.h), read
 * before anything starts: the datapath is chosen before any port exists.
 * --datapath wins over it; which one is said.  A file that does not parse
 * is left to run_config(), which refuses it with FILE:LINE. */
static void config_datapath(struct cmdline *cl)
{
	struct vxd_options *o = &cl->opts;
	struct ctl_config cfg;
	char err[CTL_CONFIG_ERR_SIZE];
	if (!o->config_path || ctl_config_load(o->config_path, &cfg, err, sizeof(err)) < 0)
		return;
	if (cfg.n_cmds && cfg.cmds[0].verb == CTL_DATAPATH) {
		const char *file = cfg.cmds[0].datapath_kernel ? "kernel" : "user";
		if (!o->datapath_cmdline)
			o->datapath = file;
		if (!o->quiet && o->datapath_cmdline)
			fprintf(stderr, "vxswitchd: datapath %s: --datapath on the command line wins over %s:%u "
				"(datapath %s)\n", o->datapath, o->config_path, cfg.lines[0], file);
		else if (!o->quiet)
			fprintf(stderr, "vxswitchd: datapath %s: from %s:%u\n", file, o->config_path, cfg.lines[0]);
	}
	ctl_config_release(&cfg);
}

/* The options that only make sense together; exits 2 otherwise. */
static void check_options(const struct cmdline *cl)
{
	const struct vxd_options *o = &cl->opts;
	if (o->keep_datapath && (!o->datapath || strcmp(o->datapath, "kernel"))) {
		fprintf(stderr, "vxswitchd: --keep-datapath keeps the kernel datapath: add --datapath kernel "
			"(or `datapath kernel` as CONFIG's first line)\n");
		exit(2);
	}
	if (o->keep_datapath && !o->config_path) {
		fprintf(stderr, "vxswitchd: --keep-datapath needs a config file (-c): a restart adopts the ports "
			"it names and removes the others\n");
		exit(2);
	}
}

/* Options into *cl; exits 0 after --help, 2 on a bad option. */
static void parse_options(int argc, char **argv, struct cmdline *cl)
{
	int c;
	cl->opts.ctl_path = CTL_DEFAULT_SOCKET;
	while ((c = getopt_long(argc, argv, "c:s:u:g:fqp:F:m:w:h", longopts, NULL)) != -1)
		apply_option(c, optarg, cl);
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
	config_datapath(cl);
	check_options(cl);
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* SIGHUP re-reads the config file (vxctl reload does the same). */
	struct sigaction hup = { .sa_handler = on_hangup };
	sigaction(SIGHUP, &hup, NULL);
}

/* The switch, its metrics listener and its config file.  With the
 * default datapath (no --datapath, no `datapath` line) a config the
 * kernel datapath refuses (an option it cannot honour) starts the switch
 * again on the userspace datapath, which then says why (log, stats,
 * diagnose); a datapath asked for is never changed. */
static int start_switch(struct cmdline *cl, struct vxd **out)
{
	static char why[sizeof(((struct ctl_err *)0)->msg) + 32];
	for (;;) {
		struct vxd *vxd;
		int ret = vxd_create(&cl->opts, &vxd);
		if (ret < 0) {
			fprintf(stderr, "vxswitchd: cannot start: %s\n", strerror(-ret));
			return -1;
		}
		the_vxd = vxd;
		/* Bound before root goes, so a port under 1024 works too. */
		char merr[300];
		if (cl->metrics && vxd_metrics_start(vxd, cl->metrics, merr, sizeof(merr)) < 0) {
			fprintf(stderr, "vxswitchd: %s\n", merr);
			the_vxd = NULL;
			vxd_destroy(vxd);
			return -1;
		}
		struct ctl_err err = { 0 };
		if (!cl->opts.config_path || (ret = run_config(vxd, &err)) == 0) {
			*out = vxd;
			return 0;
		}
		/* EOPNOTSUPP: what the kernel datapath cannot honour; any other
		 * error (a bad line) the userspace datapath would refuse too. */
		bool again = ret == -EOPNOTSUPP && !cl->opts.datapath && !cl->opts.datapath_why &&
			     vxd_datapath_kernel(vxd);
		the_vxd = NULL;
		vxd_destroy(vxd);
		if (!again) {
			fprintf(stderr, "vxswitchd: %s\n", err.msg);
			return -1;
		}
		snprintf(why, sizeof(why), "it refused the configuration: %s", err.msg);
		cl->opts.datapath_why = why;
		fprintf(stderr, "vxswitchd: the default datapath, kernel, refused the configuration (%s): starting "
			"again on the userspace datapath (--datapath user says so and skips the try)\n", err.msg);
	}
}

int main(int argc, char **argv)
{
	struct cmdline cl = { 0 };
	struct privs pv;
	char err[PRIVS_ERR_LEN];
	parse_options(argc, argv, &cl);
	if (cl.cleanup) {
		char why[256] = "";
		int cret = kdp_ctl_cleanup(0, cl.opts.bpffs, why, sizeof(why));
		if (cret < 0)
			fprintf(stderr, "vxswitchd: --cleanup: %s (kept pins and device removed anyway)\n",
				why[0] ? why : strerror(-cret));
		return cret < 0 ? 1 : 0;
	}
	if (privs_lookup(&pv, cl.user, cl.group, err) < 0) {
		fprintf(stderr, "vxswitchd: %s\n", err);
		return 2;
	}
	/* Before the worker thread exists, so that it inherits these. */
	if (privs_prepare(&pv, err) < 0) {
		fprintf(stderr, "vxswitchd: cannot start: %s\n", err);
		return 1;
	}
	make_socket_dir(cl.opts.ctl_path);
	/* The control socket is --group's from its first connection on. */
	cl.opts.ctl_share_group = pv.set_group;
	cl.opts.ctl_group = pv.gid;

	install_signals();
	struct vxd *vxd;
	if (start_switch(&cl, &vxd) < 0)
		return 1;
	if (privs_drop(&pv, err) < 0) {
		fprintf(stderr, "vxswitchd: %s\n", err);
		vxd_destroy(vxd);
		return 1;
	}
	int ret;
	vxd_startup_done(vxd);
	if (!cl.opts.quiet)
		fprintf(stderr, "vxswitchd: ready, control socket %s\n", cl.opts.ctl_path);
	ret = vxd_run(vxd);
	vxd_destroy(vxd);
	return ret < 0 ? 1 : 0;
}
