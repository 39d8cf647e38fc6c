/* ctl_cmd: the public entry points of the command language (see
 * ctl_cmd.h), over the verb table.
 *
 * Structure, after tc's f_flower.c without its 700-line if/else chain:
 * a table of verbs; for each verb a table of keys; for each key one
 * parse function and, in ctl_cmd_format(), the matching printer.  The
 * verbs' grammars live by concern in ctl_cmd_port.c, ctl_cmd_fdb.c and
 * ctl_knob.c over the shared toolkit of ctl_parser.h; this file only
 * finds the verb from its one or two words and hands over. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_cmd_internal.h"

static int parse_no_args(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_expect_end(ps, ctl_verb_name(cmd->verb));
}

/* save [ FILE ]: FILE absolute, printable, no ".." component (the daemon
 * writes it as root). */
static int parse_save(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	if (ctl_at_end(ps))
		return 0;
	int word = ps->pos;
	const char *path = ps->argv[ps->pos++];
	size_t len = strlen(path);
	if (path[0] != '/' || len >= CTL_PATH_SIZE || strstr(path, "/../") ||
	    (len >= 3 && !strcmp(path + len - 3, "/..")))
		return ctl_fail(ps, word, "bad FILE for \"save\": an absolute path under %d characters, no \"..\"",
				CTL_PATH_SIZE);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)path[i] < 0x21 || (unsigned char)path[i] > 0x7e)
			return ctl_fail(ps, word, "bad FILE for \"save\": printable characters only");
	memcpy(cmd->save.path, path, len + 1);
	cmd->save.has_path = true;
	return ctl_expect_end(ps, "save");
}

/* workers N [ cpus LIST ] */
static int parse_workers(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v;
	int ret = ctl_take_value(ps, "workers", "a worker count (1..16)", &v);
	if (ret == 0)
		ret = ctl_parse_u32(ps, "workers", 1, CTL_MAX_WORKERS, &cmd->workers.n);
	if (ret < 0 || ctl_at_end(ps))
		return ret;
	if (strcmp(ps->argv[ps->pos], "cpus") != 0)
		return ctl_fail(ps, ps->pos, "unexpected word, expected \"cpus LIST\" or the end");
	ps->pos++;
	ret = ctl_take_value(ps, "cpus", "a CPU list (e.g. 0-3,6)", &v);
	if (ret < 0)
		return ret;
	size_t len = strlen(v);
	bool ok = len > 0 && len < CTL_CPULIST_SIZE && strspn(v, "0123456789-,") == len && v[0] != '-' && v[0] != ',' &&
		  v[len - 1] != '-' && v[len - 1] != ',';
	if (!ok)
		return ctl_fail(ps, ps->pos - 1, "bad CPU list, expected numbers and ranges like 0-3,6");
	memcpy(cmd->workers.cpus, v, len + 1);
	cmd->workers.has_cpus = true;
	return ctl_expect_end(ps, "workers");
}

/* datapath kernel|user */
static int parse_datapath(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	const char *v;
	int ret = ctl_take_value(ps, "datapath", "kernel or user", &v);
	if (ret < 0)
		return ret;
	if (strcmp(v, "kernel") && strcmp(v, "user"))
		return ctl_fail(ps, ps->pos - 1, "bad datapath, expected kernel or user");
	cmd->datapath_kernel = !strcmp(v, "kernel");
	return ctl_expect_end(ps, "datapath");
}

/* filter ...: tc's grammar, parsed from its first word (ctl_flower.h). */
static int parse_filter(struct ctl_parser *ps, struct ctl_cmd *cmd)
{
	return ctl_flower_parse(ps->argc, ps->argv, &cmd->filter, ps->err);
}

struct verb_def {
	const char *word1, *word2; /* word2 NULL: a one-word verb */
	enum ctl_verb verb;
	int (*parse)(struct ctl_parser *ps, struct ctl_cmd *cmd);
};

static const struct verb_def verbs[] = {
	{ "port", "add", CTL_PORT_ADD, ctl_parse_port_add },
	{ "port", "del", CTL_PORT_DEL, ctl_parse_port_del },
	{ "port", "show", CTL_PORT_SHOW, parse_no_args },
	{ "fdb", "show", CTL_FDB_SHOW, ctl_parse_fdb_show_flush },
	{ "fdb", "add", CTL_FDB_ADD, ctl_parse_fdb_add },
	{ "fdb", "del", CTL_FDB_DEL, ctl_parse_fdb_del },
	{ "fdb", "flush", CTL_FDB_FLUSH, ctl_parse_fdb_show_flush },
	{ "stats", NULL, CTL_STATS, ctl_parse_port_ref },
	{ "set", NULL, CTL_SET, ctl_parse_set },
	{ "show", "knobs", CTL_SHOW_KNOBS, parse_no_args },
	{ "show", "config", CTL_SHOW_CONFIG, parse_no_args }, /* verbs of one first word stay together */
	{ "diagnose", NULL, CTL_DIAGNOSE, ctl_parse_port_ref },
	{ "version", NULL, CTL_VERSION, parse_no_args },
	{ "reload", NULL, CTL_RELOAD, parse_no_args },
	{ "save", NULL, CTL_SAVE, parse_save },
	{ "capture", NULL, CTL_CAPTURE, ctl_parse_capture },
	{ "filter", NULL, CTL_FILTER, parse_filter },
	{ "workers", NULL, CTL_WORKERS, parse_workers },
	{ "datapath", NULL, CTL_DATAPATH, parse_datapath },
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

const char *ctl_verb_name(enum ctl_verb verb)
{
	static const char *const names[] = {
		[CTL_PORT_ADD] = "port add", [CTL_PORT_DEL] = "port del",
		[CTL_PORT_SHOW] = "port show", [CTL_FDB_SHOW] = "fdb show",
		[CTL_FDB_ADD] = "fdb add", [CTL_FDB_DEL] = "fdb del",
		[CTL_FDB_FLUSH] = "fdb flush", [CTL_STATS] = "stats",
		[CTL_SET] = "set", [CTL_SHOW_KNOBS] = "show knobs",
		[CTL_DIAGNOSE] = "diagnose", [CTL_VERSION] = "version",
		[CTL_RELOAD] = "reload", [CTL_SHOW_CONFIG] = "show config", [CTL_SAVE] = "save",
		[CTL_CAPTURE] = "capture", [CTL_FILTER] = "filter", [CTL_WORKERS] = "workers",
		[CTL_BATCH] = "-batch", [CTL_DATAPATH] = "datapath",
	};
	if ((unsigned int)verb >= sizeof(names) / sizeof(names[0]) || !names[verb])
		return "?";
	return names[verb];
}

static void list_words(const char *word1, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < N_VERBS; i++) {
		const char *w = word1 ? verbs[i].word2 : verbs[i].word1;
		if (word1 && strcmp(verbs[i].word1, word1))
			continue;
		/* each first word once */
		if (!word1 && i && !strcmp(verbs[i - 1].word1, w))
			continue;
		int n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", w);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

int ctl_cmd_parse(int argc, const char *const *argv, struct ctl_cmd *cmd,
		  struct ctl_err *err)
{
	struct ctl_parser ps = { .argc = argc, .argv = argv, .pos = 0, .err = err };
	char expected[128];

	memset(cmd, 0, sizeof(*cmd));
	if (err)
		memset(err, 0, sizeof(*err));
	if (argc < 0)
		argc = ps.argc = 0;
	if (argc > CTL_MAX_WORDS)
		return ctl_fail(&ps, CTL_MAX_WORDS, "too many words, at most %d", CTL_MAX_WORDS);

	list_words(NULL, expected, sizeof(expected));
	if (argc == 0)
		return ctl_fail(&ps, 0, "missing command, expected one of: %s", expected);
	const char *w1 = argv[ps.pos++];
	size_t i;
	for (i = 0; i < N_VERBS; i++)
		if (!strcmp(verbs[i].word1, w1))
			break;
	if (i == N_VERBS)
		return ctl_fail(&ps, 0, "unknown command, expected one of: %s", expected);
	if (verbs[i].word2) {
		list_words(w1, expected, sizeof(expected));
		if (ctl_at_end(&ps))
			return ctl_fail(&ps, ps.pos, "missing word after \"%s\", expected one of: %s",
				    w1, expected);
		const char *w2 = argv[ps.pos++];
		for (; i < N_VERBS && !strcmp(verbs[i].word1, w1); i++)
			if (!strcmp(verbs[i].word2, w2))
				break;
		if (i == N_VERBS || strcmp(verbs[i].word1, w1))
			return ctl_fail(&ps, 1, "unknown \"%s\" command, expected one of: %s", w1,
				    expected);
	}
	cmd->verb = verbs[i].verb;
	int ret = verbs[i].parse(&ps, cmd);
	if (ret)
		memset(cmd, 0, sizeof(*cmd)); /* nothing half-parsed escapes */
	return ret;
}

/* ---- format: the verb, then its grammar file's printer --------------- */

int ctl_cmd_format(const struct ctl_cmd *cmd, char *buf, size_t size)
{
	struct ctl_sbuf sb = { .buf = buf, .size = size };
	const char *verb = ctl_verb_name(cmd->verb);
	int ret = 0;

	if (!strcmp(verb, "?"))
		return -EINVAL;
	if (size == 0)
		return -ENOSPC;
	if (cmd->verb == CTL_BATCH) /* a file, not a line */
		return -EINVAL;
	if (cmd->verb == CTL_FILTER) /* its own printer, from "filter" on */
		return ctl_flower_format(&cmd->filter, buf, size);
	buf[0] = '\0';
	ctl_sb_printf(&sb, "%s", verb);
	switch (cmd->verb) {
	case CTL_PORT_ADD:
		ret = ctl_format_port_add(&sb, &cmd->port_add);
		break;
	case CTL_PORT_DEL:
		ctl_sb_printf(&sb, " %s", cmd->port.name);
		break;
	case CTL_STATS:
	case CTL_DIAGNOSE:
		if (cmd->port.has_port)
			ctl_sb_printf(&sb, " port %s", cmd->port.name);
		break;
	case CTL_FDB_SHOW:
	case CTL_FDB_FLUSH:
	case CTL_FDB_ADD:
	case CTL_FDB_DEL:
		ret = ctl_format_fdb(&sb, cmd);
		break;
	case CTL_SET:
		ret = ctl_format_set(&sb, &cmd->set);
		break;
	case CTL_SAVE:
		if (cmd->save.has_path)
			ctl_sb_printf(&sb, " %s", cmd->save.path);
		break;
	case CTL_CAPTURE:
		ret = ctl_format_capture(&sb, &cmd->capture);
		break;
	case CTL_WORKERS:
		ctl_sb_printf(&sb, " %u", cmd->workers.n);
		if (cmd->workers.has_cpus)
			ctl_sb_printf(&sb, " cpus %s", cmd->workers.cpus);
		break;
	case CTL_DATAPATH:
		ctl_sb_printf(&sb, " %s", cmd->datapath_kernel ? "kernel" : "user");
		break;
	default:
		break;
	}
	if (ret)
		return ret;
	if (sb.overflow) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)sb.len;
}

bool ctl_cmd_equal(const struct ctl_cmd *a, const struct ctl_cmd *b)
{
	/* Both were zeroed by ctl_cmd_parse() before being filled, padding and
	 * unused union bytes included. */
	return !memcmp(a, b, sizeof(*a));
}

int ctl_split_words(char *line, char **words, int max_words)
{
	int n = 0;
	char *c = line;
	for (;;) {
		while (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r')
			*c++ = '\0';
		if (!*c)
			return n;
		if (n == max_words)
			return -E2BIG;
		words[n++] = c;
		while (*c && *c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
			c++;
	}
}

const char *ctl_cmd_grammar(void)
{
	return "COMMAND := port add NAME type tap vni VNI [ netns NS ] [ mtu MTU ] [ mac MAC ] [ max-macs N ]\n"
	       "         | port add NAME type afpacket dev DEV vni VNI [ netns NS ] [ max-macs N ]\n"
	       "               (an existing link: a container's veth, the tap QEMU holds for its VM)\n"
	       "         | port add NAME type veth vni VNI netns NS [ mtu MTU ]\n"
	       "               (vxswitchd --datapath kernel: a veth pair, NAME here and NAME in NS)\n"
	       "         | port add NAME type vxlan vni VNI local IP remote IP [ remote IP ... ]\n"
	       "               [ dstport PORT ] [ srcport PORT-PORT (at most 64 ports) ] [ udpcsum { on | off } ]\n"
	       "               [ df { set | unset | inherit } (IPv4; default set) ]\n"
	       "               [ mtu MTU ]\n"
	       "               [ evpn (remote VTEPs and MACs from BGP EVPN through FRR's zebra; IPv4;\n"
	       "                 then remote IP is optional) ]\n"
	       "         | port del NAME\n"
	       "         | port show\n"
	       "         | fdb show [ vni VNI ]\n"
	       "         | fdb add MAC vni VNI { port NAME | remote IP }\n"
	       "         | fdb del MAC vni VNI\n"
	       "         | fdb flush [ vni VNI ]\n"
	       "         | stats [ port NAME ]\n"
	       "         | set KNOB VALUE\n"
	       "         | show knobs\n"
	       "         | diagnose [ port NAME ] (findings: cause, numbers, what to do; exit 1 if any)\n"
	       "         | version\n"
	       "         | reload          (re-read the config file: apply the difference)\n"
	       "         | show config     (the running state as a config file)\n"
	       "         | save [ FILE ]   (write it to FILE, absolute; default: the config file)\n"
	       "         | capture NAME [ in | out | both ] [ inner | outer ] [ -c COUNT ] [ -w FILE ] [ FILTER ... ]\n"
	       "                           (copies of the port's frames: default both directions, inner\n"
	       "                           frames; outer = a vxlan port's datagrams with outer headers;\n"
	       "                           -w FILE writes pcap, - for stdout; FILTER is a tcpdump\n"
	       "                           expression, after the keys; Ctrl-C ends it)\n"
	       "         | filter ...      (flower rules on a port's ingress or egress, tc's grammar: FILTER)\n"
	       "         | workers N [ cpus LIST ]  (a config line: datapath workers 1..16 and their CPUs,\n"
	       "                           set at start-up; at run time: checks they are what runs)\n"
	       "         | datapath { kernel | user }  (a config file's first line, read at start-up;\n"
	       "                           refused at run time: restart vxswitchd to change it)\n"
	       "KNOB VALUE := { gro | gso | tap-tso | udp-gro | udp-segment | rx-csum } { on | off }\n"
	       "            | gro-hold-us 0..1000000 | gro-max-size 1500..65535\n"
	       "            | fdb-ageing SECONDS (0..1000000, 0 = never) | fdb-max 1..16777216\n"
	       "            | poll-us 0..1000000 (workers poll this long after traffic before sleeping)\n"
	       "            | upcall-rate 1..100000 | upcall-burst 1..100000 (kernel datapath: each\n"
	       "                           port's upcalls a second, and at once; default 1000, 100)\n"
	       "NAME := port name, 1..15 printable characters, no '/' or ':'\n"
	       "NS   := network namespace name, 1..63 printable characters, no '/'\n"
	       "VNI  := 0..16777215    MTU := 68..65535    PORT := 1..65535\n"
	       "IP   := IPv4 a.b.c.d | IPv6 (local and remotes of one port in one family)\n"
	       "MAC  := aa:bb:cc:dd:ee:ff (unicast)\n"
	       "Keywords are matched in full; optional keys come in any order, each once\n"
	       "(remote may repeat with different addresses).\n";
}
