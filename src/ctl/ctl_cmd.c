/* ctl_cmd: parse and format the vxctl command language (see ctl_cmd.h).
 *
 * Structure, after tc's f_flower.c without its 700-line if/else chain:
 * a table of verbs; for each verb a table of keys; for each key one
 * parse_* function and, in ctl_cmd_format(), the matching print_*.  Every
 * refusal goes through fail(), so all messages have the same shape:
 *   word N "TEXT": what is wrong, expected WHAT */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_cmd.h"

static const struct ctl_knob_info knob_table[CTL_KNOB_COUNT] = {
#define CTL_KNOB_INFO(e, nm, kd, lo, hi, hp) \
	[CTL_KNOB_##e] = { .name = nm, .kind = kd, .min = lo, .max = hi, .help = hp },
	CTL_KNOBS(CTL_KNOB_INFO)
#undef CTL_KNOB_INFO
};

const struct ctl_knob_info *ctl_knob_info(enum ctl_knob knob)
{
	if ((unsigned int)knob >= CTL_KNOB_COUNT)
		return NULL;
	return &knob_table[knob];
}

/* ---- parser state and the one error path ------------------------------ */

struct parser {
	int argc;
	const char *const *argv;
	int pos;             /* index of the next word to read */
	int first_remote;    /* port add: word of the first "remote" value */
	struct ctl_err *err;
};

/* word is a 0-based argv index; argc means "after the last word".  The
 * word is quoted with anything unprintable shown as '?', so the message
 * stays one line whatever was typed. */
static int __attribute__((format(printf, 3, 4)))
fail(struct parser *ps, int word, const char *fmt, ...)
{
	if (!ps->err)
		return -EINVAL;
	char *msg = ps->err->msg;
	size_t size = sizeof(ps->err->msg), len;
	ps->err->word = word + 1;
	if (word < ps->argc) {
		char quoted[44];
		const char *w = ps->argv[word];
		size_t n = 0;
		for (; w[n] && n < 40; n++)
			quoted[n] = w[n] > ' ' && w[n] < 0x7f ? w[n] : '?';
		if (w[n])
			quoted[n++] = '.', quoted[n++] = '.', quoted[n++] = '.';
		quoted[n] = '\0';
		len = (size_t)snprintf(msg, size, "word %d \"%s\": ", word + 1, quoted);
	} else {
		len = (size_t)snprintf(msg, size, "word %d (end of command): ", word + 1);
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg + len, size - len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool at_end(const struct parser *ps)
{
	return ps->pos >= ps->argc;
}

/* The value after keyword `key` (at ps->pos - 1); fails naming what was
 * expected when the command ends there. */
static int take_value(struct parser *ps, const char *key, const char *expected,
		      const char **value)
{
	if (at_end(ps))
		return fail(ps, ps->pos, "missing value after \"%s\", expected %s",
			    key, expected);
	*value = ps->argv[ps->pos++];
	return 0;
}

static int expect_end(struct parser *ps, const char *verb)
{
	if (!at_end(ps))
		return fail(ps, ps->pos, "unexpected word, \"%s\" takes no more arguments",
			    verb);
	return 0;
}

/* ---- one parse_* per kind of value ------------------------------------ */

/* Strict unsigned decimal: digits only, no sign, no spaces, no hex. */
static int parse_u32(struct parser *ps, const char *key, uint32_t min,
		     uint32_t max, uint32_t *out)
{
	int word = ps->pos - 1;
	const char *s = ps->argv[word];
	uint64_t v = 0;

	if (!*s)
		return fail(ps, word, "bad number for \"%s\", expected %u..%u", key, min, max);
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return fail(ps, word, "bad number for \"%s\", expected %u..%u",
				    key, min, max);
		v = v * 10 + (uint64_t)(*c - '0');
		if (v > UINT32_MAX)
			break;
	}
	if (v < min || v > max)
		return fail(ps, word, "\"%s\" out of range, expected %u..%u", key, min, max);
	*out = (uint32_t)v;
	return 0;
}

static int parse_vni(struct parser *ps, uint32_t *vni)
{
	const char *v = NULL;
	int ret = take_value(ps, "vni", "VNI (0..16777215)", &v);
	return ret ? ret : parse_u32(ps, "vni", 0, CTL_VNI_MAX, vni);
}

/* Names end up in messages, JSON and config files: keep them to printable
 * ASCII without blanks, and for port names the rules of dev_valid_name(). */
static int parse_name(struct parser *ps, const char *key, size_t size,
		      bool is_netns, char *out)
{
	const char *v = NULL;
	int ret = take_value(ps, key, is_netns ? "NS" : "NAME", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	size_t len = strlen(v);
	if (len == 0 || len >= size)
		return fail(ps, word, "bad name for \"%s\", expected 1..%zu characters",
			    key, size - 1);
	if (!strcmp(v, ".") || !strcmp(v, ".."))
		return fail(ps, word, "bad name for \"%s\", \".\" and \"..\" are reserved", key);
	for (const char *c = v; *c; c++) {
		bool printable = *c > ' ' && *c < 0x7f;
		if (!printable || *c == '/' || (!is_netns && *c == ':'))
			return fail(ps, word,
				    "bad name for \"%s\", expected printable characters other than %s",
				    key, is_netns ? "'/'" : "'/' and ':'");
	}
	memcpy(out, v, len + 1);
	return 0;
}

static int parse_ip(struct parser *ps, const char *key, struct ctl_ip *ip)
{
	const char *v = NULL;
	int ret = take_value(ps, key, "IP (IPv4 or IPv6 address)", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	memset(ip, 0, sizeof(*ip));
	if (strchr(v, ':')) {
		ip->family = AF_INET6;
		if (inet_pton(AF_INET6, v, &ip->v6) != 1)
			return fail(ps, word, "bad IPv6 address for \"%s\"", key);
		if (IN6_IS_ADDR_V4MAPPED(&ip->v6))
			return fail(ps, word, "IPv4-mapped address for \"%s\", write it as IPv4",
				    key);
		if (IN6_IS_ADDR_UNSPECIFIED(&ip->v6))
			return fail(ps, word, "unspecified address for \"%s\"", key);
	} else {
		ip->family = AF_INET;
		if (inet_pton(AF_INET, v, &ip->v4) != 1)
			return fail(ps, word, "bad IP address for \"%s\", expected IPv4 a.b.c.d or IPv6",
				    key);
		if (ip->v4.s_addr == htonl(INADDR_ANY))
			return fail(ps, word, "unspecified address for \"%s\"", key);
	}
	return 0;
}

static bool ip_is_multicast(const struct ctl_ip *ip)
{
	if (ip->family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(&ip->v6);
	return IN_MULTICAST(ntohl(ip->v4.s_addr));
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly aa:bb:cc:dd:ee:ff; a static FDB entry must be a unicast address
 * (a multicast or zero MAC would never be looked up as a destination). */
static int parse_mac(struct parser *ps, const char *verb, uint8_t mac[6])
{
	const char *v = NULL;
	int ret = take_value(ps, verb, "MAC (aa:bb:cc:dd:ee:ff)", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	if (strlen(v) != 17)
		goto bad;
	for (int i = 0; i < 6; i++) {
		int hi = hex_digit(v[3 * i]), lo = hex_digit(v[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && v[3 * i + 2] != ':'))
			goto bad;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	if (mac[0] & 1)
		return fail(ps, word, "multicast MAC, expected a unicast MAC");
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return fail(ps, word, "zero MAC, expected a unicast MAC");
	return 0;
bad:
	return fail(ps, word, "bad MAC, expected aa:bb:cc:dd:ee:ff");
}

static int parse_onoff(struct parser *ps, const char *key, bool *out)
{
	const char *v = NULL;
	int ret = take_value(ps, key, "on or off", &v);
	if (ret)
		return ret;
	if (!strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "off"))
		*out = false;
	else
		return fail(ps, ps->pos - 1, "bad value for \"%s\", expected on or off", key);
	return 0;
}

/* MIN-MAX, both 1..65535, MIN <= MAX. */
static int parse_port_range(struct parser *ps, uint16_t *min, uint16_t *max)
{
	const char *v = NULL;
	int ret = take_value(ps, "srcport", "MIN-MAX (1..65535)", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	const char *dash = strchr(v, '-');
	uint32_t lo = 0, hi = 0;
	bool ok = dash && dash != v && dash[1];
	for (const char *c = v; ok && *c; c++) {
		if (c == dash)
			continue;
		if (*c < '0' || *c > '9') {
			ok = false;
			break;
		}
		uint32_t *n = c < dash ? &lo : &hi;
		*n = *n * 10 + (uint32_t)(*c - '0');
		if (*n > 65535) {
			ok = false;
			break;
		}
	}
	if (!ok || lo < 1 || hi < 1)
		return fail(ps, word, "bad port range for \"srcport\", expected MIN-MAX within 1..65535");
	if (lo > hi)
		return fail(ps, word, "port range for \"srcport\" has MIN > MAX");
	*min = (uint16_t)lo;
	*max = (uint16_t)hi;
	return 0;
}

/* ---- keys: a table per verb -------------------------------------------- */

/* A key parser reads the value(s) after its keyword; the keyword itself is
 * at ps->pos - 1 when it runs. */
struct key_def {
	const char *word;
	uint32_t flag;      /* bit in `given`; 0 = repeatable */
	int (*parse)(struct parser *ps, struct ctl_cmd *cmd);
	unsigned int types; /* port add: 1 << CTL_PORT_* it applies to */
};

#define TAP (1u << CTL_PORT_TAP)
#define VXLAN (1u << CTL_PORT_VXLAN)

static int key_port_vni(struct parser *ps, struct ctl_cmd *cmd)
{
	return parse_vni(ps, &cmd->port_add.vni);
}

static int key_netns(struct parser *ps, struct ctl_cmd *cmd)
{
	return parse_name(ps, "netns", CTL_NETNS_SIZE, true, cmd->port_add.netns);
}

static int key_mtu(struct parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	int ret = take_value(ps, "mtu", "MTU (68..65535)", &v);
	return ret ? ret : parse_u32(ps, "mtu", CTL_MTU_MIN, CTL_MTU_MAX, &cmd->port_add.mtu);
}

static int key_local(struct parser *ps, struct ctl_cmd *cmd)
{
	int ret = parse_ip(ps, "local", &cmd->port_add.local);
	if (ret)
		return ret;
	if (ip_is_multicast(&cmd->port_add.local))
		return fail(ps, ps->pos - 1, "multicast address for \"local\", expected unicast");
	return 0;
}

static int key_remote(struct parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_port_add *pa = &cmd->port_add;
	struct ctl_ip ip;
	int ret = parse_ip(ps, "remote", &ip);
	if (ret)
		return ret;
	if (pa->n_remotes == CTL_MAX_REMOTES)
		return fail(ps, ps->pos - 1, "too many remotes, at most %d", CTL_MAX_REMOTES);
	for (unsigned int i = 0; i < pa->n_remotes; i++)
		if (!memcmp(&pa->remotes[i], &ip, sizeof(ip)))
			return fail(ps, ps->pos - 1, "duplicate \"remote\"");
	if (pa->n_remotes && pa->remotes[0].family != ip.family)
		return fail(ps, ps->pos - 1, "remotes mix IPv4 and IPv6");
	if (!pa->n_remotes)
		ps->first_remote = ps->pos - 1;
	pa->remotes[pa->n_remotes++] = ip;
	return 0;
}

static int key_dstport(struct parser *ps, struct ctl_cmd *cmd)
{
	const char *v = NULL;
	uint32_t port;
	int ret = take_value(ps, "dstport", "PORT (1..65535)", &v);
	if (!ret)
		ret = parse_u32(ps, "dstport", 1, 65535, &port);
	if (!ret)
		cmd->port_add.dstport = (uint16_t)port;
	return ret;
}

static int key_srcport(struct parser *ps, struct ctl_cmd *cmd)
{
	return parse_port_range(ps, &cmd->port_add.srcport_min, &cmd->port_add.srcport_max);
}

static int key_udpcsum(struct parser *ps, struct ctl_cmd *cmd)
{
	return parse_onoff(ps, "udpcsum", &cmd->port_add.udpcsum);
}

static const struct key_def port_add_keys[] = {
	{ "vni", CTL_PK_VNI, key_port_vni, TAP | VXLAN },
	{ "netns", CTL_PK_NETNS, key_netns, TAP },
	{ "local", CTL_PK_LOCAL, key_local, VXLAN },
	{ "remote", 0, key_remote, VXLAN },
	{ "dstport", CTL_PK_DSTPORT, key_dstport, VXLAN },
	{ "srcport", CTL_PK_SRCPORT, key_srcport, VXLAN },
	{ "udpcsum", CTL_PK_UDPCSUM, key_udpcsum, VXLAN },
	{ "mtu", CTL_PK_MTU, key_mtu, TAP | VXLAN },
	{ NULL, 0, NULL, 0 },
};

/* fdb and port-ref keys */
enum { K_VNI = 1 << 0, K_PORT = 1 << 1, K_REMOTE = 1 << 2 };

static int key_fdb_vni(struct parser *ps, struct ctl_cmd *cmd)
{
	cmd->fdb.has_vni = true;
	return parse_vni(ps, &cmd->fdb.vni);
}

/* An entry points at one place: a local port or a remote VTEP. */
static int check_one_dst(struct parser *ps, const struct ctl_cmd *cmd)
{
	if (cmd->fdb.dst != CTL_FDB_DST_NONE)
		return fail(ps, ps->pos - 1,
			    "give either \"port NAME\" or \"remote IP\", not both");
	return 0;
}

static int key_fdb_port(struct parser *ps, struct ctl_cmd *cmd)
{
	int ret = check_one_dst(ps, cmd);
	if (ret)
		return ret;
	cmd->fdb.dst = CTL_FDB_DST_PORT;
	return parse_name(ps, "port", CTL_NAME_SIZE, false, cmd->fdb.port);
}

static int key_fdb_remote(struct parser *ps, struct ctl_cmd *cmd)
{
	int ret = check_one_dst(ps, cmd);
	if (ret)
		return ret;
	cmd->fdb.dst = CTL_FDB_DST_REMOTE;
	return parse_ip(ps, "remote", &cmd->fdb.remote);
}

static int key_ref_port(struct parser *ps, struct ctl_cmd *cmd)
{
	cmd->port.has_port = true;
	return parse_name(ps, "port", CTL_NAME_SIZE, false, cmd->port.name);
}

static const struct key_def fdb_add_keys[] = {
	{ "vni", K_VNI, key_fdb_vni, 1 },
	{ "port", K_PORT, key_fdb_port, 1 },
	{ "remote", K_REMOTE, key_fdb_remote, 1 },
	{ NULL, 0, NULL, 0 },
};
/* fdb del/show/flush take only vni; stats/diagnose only port. */
static const struct key_def fdb_vni_keys[] = {
	{ "vni", K_VNI, key_fdb_vni, 1 },
	{ NULL, 0, NULL, 0 },
};
static const struct key_def port_ref_keys[] = {
	{ "port", K_PORT, key_ref_port, 1 },
	{ NULL, 0, NULL, 0 },
};

/* "one of: a, b, c" over the keys that apply to `types`. */
static void list_keys(const struct key_def *keys, unsigned int types, char *buf,
		      size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (const struct key_def *k = keys; k->word; k++) {
		if (!(k->types & types))
			continue;
		int n = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", k->word);
		if (n < 0 || (size_t)n >= size - len)
			break;
		len += (size_t)n;
	}
}

/* Read `KEY VALUE` pairs until the end; each key at most once unless its
 * flag is 0.  *given collects the flags seen. */
static int parse_keys(struct parser *ps, const struct key_def *keys, unsigned int types,
		      const char *what, struct ctl_cmd *cmd, uint32_t *given)
{
	while (!at_end(ps)) {
		int word = ps->pos;
		const char *w = ps->argv[ps->pos++];
		const struct key_def *k, *any_type = NULL;
		for (k = keys; k->word; k++) {
			if (strcmp(k->word, w))
				continue;
			any_type = k;
			if (k->types & types)
				break;
		}
		if (!k->word) {
			char expected[160];
			list_keys(keys, types, expected, sizeof(expected));
			if (any_type)
				return fail(ps, word, "not valid for %s, expected one of: %s",
					    what, expected);
			if (!expected[0])
				return fail(ps, word, "unexpected word, \"%s\" takes no more arguments",
					    what);
			return fail(ps, word, "unknown keyword, expected one of: %s", expected);
		}
		if (k->flag && (*given & k->flag))
			return fail(ps, word, "duplicate \"%s\"", k->word);
		int ret = k->parse(ps, cmd);
		if (ret)
			return ret;
		*given |= k->flag;
	}
	return 0;
}

/* ---- verbs ------------------------------------------------------------- */

static int parse_port_add(struct parser *ps, struct ctl_cmd *cmd)
{
	struct ctl_port_add *pa = &cmd->port_add;
	const char *v = NULL;
	int ret = parse_name(ps, "port add", CTL_NAME_SIZE, false, pa->name);
	if (ret)
		return ret;
	if (at_end(ps))
		return fail(ps, ps->pos, "missing \"type\", expected type tap or type vxlan");
	if (strcmp(ps->argv[ps->pos], "type"))
		return fail(ps, ps->pos, "unknown keyword, expected \"type\"");
	ps->pos++;
	ret = take_value(ps, "type", "tap or vxlan", &v);
	if (ret)
		return ret;
	if (!strcmp(v, "tap"))
		pa->type = CTL_PORT_TAP;
	else if (!strcmp(v, "vxlan"))
		pa->type = CTL_PORT_VXLAN;
	else
		return fail(ps, ps->pos - 1, "unknown port type, expected tap or vxlan");

	pa->dstport = CTL_VXLAN_DEFAULT_DSTPORT;
	pa->udpcsum = true;
	uint32_t given = 0;
	const char *what = pa->type == CTL_PORT_TAP ? "type tap" : "type vxlan";
	ret = parse_keys(ps, port_add_keys, 1u << pa->type, what, cmd, &given);
	if (ret)
		return ret;
	if (pa->n_remotes)
		given |= CTL_PK_REMOTE;
	pa->given = given;
	if (pa->type == CTL_PORT_TAP)
		return 0;

	if (!(given & CTL_PK_VNI))
		return fail(ps, ps->pos, "missing \"vni VNI\", required for type vxlan");
	if (!(given & CTL_PK_LOCAL))
		return fail(ps, ps->pos, "missing \"local IP\", required for type vxlan");
	if (!(given & CTL_PK_REMOTE))
		return fail(ps, ps->pos, "missing \"remote IP\", required for type vxlan");
	if (pa->remotes[0].family != pa->local.family)
		return fail(ps, ps->first_remote, "\"remote\" is IPv%c but \"local\" is IPv%c",
			    pa->remotes[0].family == AF_INET ? '4' : '6',
			    pa->local.family == AF_INET ? '4' : '6');
	return 0;
}

static int parse_port_del(struct parser *ps, struct ctl_cmd *cmd)
{
	int ret = parse_name(ps, "port del", CTL_NAME_SIZE, false, cmd->port.name);
	if (ret)
		return ret;
	cmd->port.has_port = true;
	return expect_end(ps, "port del");
}

static int parse_no_args(struct parser *ps, struct ctl_cmd *cmd)
{
	return expect_end(ps, ctl_verb_name(cmd->verb));
}

static int parse_fdb_show_flush(struct parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	return parse_keys(ps, fdb_vni_keys, 1, ctl_verb_name(cmd->verb), cmd, &given);
}

static int parse_fdb_add(struct parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	int ret = parse_mac(ps, ctl_verb_name(cmd->verb), cmd->fdb.mac);
	if (ret)
		return ret;
	ret = parse_keys(ps, fdb_add_keys, 1, "fdb add", cmd, &given);
	if (ret)
		return ret;
	if (!(given & K_VNI))
		return fail(ps, ps->pos, "missing \"vni VNI\", required for fdb add");
	if (!(given & (K_PORT | K_REMOTE)))
		return fail(ps, ps->pos, "missing \"port NAME\" or \"remote IP\", required for fdb add");
	return 0;
}

static int parse_fdb_del(struct parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	int ret = parse_mac(ps, ctl_verb_name(cmd->verb), cmd->fdb.mac);
	if (!ret)
		ret = parse_keys(ps, fdb_vni_keys, 1, "fdb del", cmd, &given);
	if (!ret && !(given & K_VNI))
		ret = fail(ps, ps->pos, "missing \"vni VNI\", required for fdb del");
	return ret;
}

static int parse_port_ref(struct parser *ps, struct ctl_cmd *cmd)
{
	uint32_t given = 0;
	return parse_keys(ps, port_ref_keys, 1, ctl_verb_name(cmd->verb), cmd, &given);
}

static int parse_set(struct parser *ps, struct ctl_cmd *cmd)
{
	const char *name = NULL, *v = NULL;
	int ret = take_value(ps, "set", "KNOB (see vxctl --help)", &name);
	if (ret)
		return ret;
	int knob;
	for (knob = 0; knob < CTL_KNOB_COUNT; knob++)
		if (!strcmp(knob_table[knob].name, name))
			break;
	if (knob == CTL_KNOB_COUNT) {
		char expected[200];
		size_t len = 0;
		expected[0] = '\0';
		for (int k = 0; k < CTL_KNOB_COUNT; k++) {
			int n = snprintf(expected + len, sizeof(expected) - len, "%s%s",
					 k ? ", " : "", knob_table[k].name);
			if (n < 0 || (size_t)n >= sizeof(expected) - len)
				break; /* truncated list; still one line */
			len += (size_t)n;
		}
		return fail(ps, ps->pos - 1, "unknown knob, expected one of: %s", expected);
	}
	const struct ctl_knob_info *info = &knob_table[knob];
	cmd->set.knob = (enum ctl_knob)knob;
	if (info->kind == CTL_KNOB_BOOL) {
		bool on = false;
		ret = parse_onoff(ps, info->name, &on);
		cmd->set.value = on;
	} else {
		char expected[48];
		snprintf(expected, sizeof(expected), "a number %u..%u", info->min, info->max);
		ret = take_value(ps, info->name, expected, &v);
		if (!ret)
			ret = parse_u32(ps, info->name, info->min, info->max, &cmd->set.value);
	}
	return ret ? ret : expect_end(ps, "set");
}

struct verb_def {
	const char *word1, *word2; /* word2 NULL: a one-word verb */
	enum ctl_verb verb;
	int (*parse)(struct parser *ps, struct ctl_cmd *cmd);
};

static const struct verb_def verbs[] = {
	{ "port", "add", CTL_PORT_ADD, parse_port_add },
	{ "port", "del", CTL_PORT_DEL, parse_port_del },
	{ "port", "show", CTL_PORT_SHOW, parse_no_args },
	{ "fdb", "show", CTL_FDB_SHOW, parse_fdb_show_flush },
	{ "fdb", "add", CTL_FDB_ADD, parse_fdb_add },
	{ "fdb", "del", CTL_FDB_DEL, parse_fdb_del },
	{ "fdb", "flush", CTL_FDB_FLUSH, parse_fdb_show_flush },
	{ "stats", NULL, CTL_STATS, parse_port_ref },
	{ "set", NULL, CTL_SET, parse_set },
	{ "show", "knobs", CTL_SHOW_KNOBS, parse_no_args },
	{ "diagnose", NULL, CTL_DIAGNOSE, parse_port_ref },
	{ "version", NULL, CTL_VERSION, parse_no_args },
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
	struct parser ps = { .argc = argc, .argv = argv, .pos = 0, .err = err };
	char expected[128];

	memset(cmd, 0, sizeof(*cmd));
	if (err)
		memset(err, 0, sizeof(*err));
	if (argc < 0)
		argc = ps.argc = 0;
	if (argc > CTL_MAX_WORDS)
		return fail(&ps, CTL_MAX_WORDS, "too many words, at most %d", CTL_MAX_WORDS);

	list_words(NULL, expected, sizeof(expected));
	if (argc == 0)
		return fail(&ps, 0, "missing command, expected one of: %s", expected);
	const char *w1 = argv[ps.pos++];
	size_t i;
	for (i = 0; i < N_VERBS; i++)
		if (!strcmp(verbs[i].word1, w1))
			break;
	if (i == N_VERBS)
		return fail(&ps, 0, "unknown command, expected one of: %s", expected);
	if (verbs[i].word2) {
		list_words(w1, expected, sizeof(expected));
		if (at_end(&ps))
			return fail(&ps, ps.pos, "missing word after \"%s\", expected one of: %s",
				    w1, expected);
		const char *w2 = argv[ps.pos++];
		for (; i < N_VERBS && !strcmp(verbs[i].word1, w1); i++)
			if (!strcmp(verbs[i].word2, w2))
				break;
		if (i == N_VERBS || strcmp(verbs[i].word1, w1))
			return fail(&ps, 1, "unknown \"%s\" command, expected one of: %s", w1,
				    expected);
	}
	cmd->verb = verbs[i].verb;
	int ret = verbs[i].parse(&ps, cmd);
	if (ret)
		memset(cmd, 0, sizeof(*cmd)); /* nothing half-parsed escapes */
	return ret;
}

/* ---- format: one print_* per key --------------------------------------- */

struct sbuf {
	char *buf;
	size_t size, len;
	bool overflow;
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	if (sb->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(sb->buf + sb->len, sb->size - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sb->size - sb->len) {
		sb->overflow = true;
		return;
	}
	sb->len += (size_t)n;
}

static void print_ip(struct sbuf *sb, const char *key, const struct ctl_ip *ip)
{
	char text[INET6_ADDRSTRLEN];
	if (!inet_ntop(ip->family, ip->bytes, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	sb_printf(sb, " %s %s", key, text);
}

static void print_mac(struct sbuf *sb, const uint8_t mac[6])
{
	sb_printf(sb, " %02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		  mac[4], mac[5]);
}

static void print_vni(struct sbuf *sb, uint32_t vni)
{
	sb_printf(sb, " vni %u", vni);
}

static void print_port_add(struct sbuf *sb, const struct ctl_port_add *pa)
{
	sb_printf(sb, " %s type %s", pa->name, pa->type == CTL_PORT_TAP ? "tap" : "vxlan");
	if (pa->given & CTL_PK_VNI)
		print_vni(sb, pa->vni);
	if (pa->given & CTL_PK_NETNS)
		sb_printf(sb, " netns %s", pa->netns);
	if (pa->given & CTL_PK_LOCAL)
		print_ip(sb, "local", &pa->local);
	for (unsigned int i = 0; i < pa->n_remotes && i < CTL_MAX_REMOTES; i++)
		print_ip(sb, "remote", &pa->remotes[i]);
	if (pa->given & CTL_PK_DSTPORT)
		sb_printf(sb, " dstport %u", pa->dstport);
	if (pa->given & CTL_PK_SRCPORT)
		sb_printf(sb, " srcport %u-%u", pa->srcport_min, pa->srcport_max);
	if (pa->given & CTL_PK_UDPCSUM)
		sb_printf(sb, " udpcsum %s", pa->udpcsum ? "on" : "off");
	if (pa->given & CTL_PK_MTU)
		sb_printf(sb, " mtu %u", pa->mtu);
}

int ctl_cmd_format(const struct ctl_cmd *cmd, char *buf, size_t size)
{
	struct sbuf sb = { .buf = buf, .size = size };
	const char *verb = ctl_verb_name(cmd->verb);

	if (!strcmp(verb, "?"))
		return -EINVAL;
	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	sb_printf(&sb, "%s", verb);
	switch (cmd->verb) {
	case CTL_PORT_ADD:
		if (cmd->port_add.type != CTL_PORT_TAP && cmd->port_add.type != CTL_PORT_VXLAN)
			return -EINVAL;
		print_port_add(&sb, &cmd->port_add);
		break;
	case CTL_PORT_DEL:
		sb_printf(&sb, " %s", cmd->port.name);
		break;
	case CTL_STATS:
	case CTL_DIAGNOSE:
		if (cmd->port.has_port)
			sb_printf(&sb, " port %s", cmd->port.name);
		break;
	case CTL_FDB_SHOW:
	case CTL_FDB_FLUSH:
		if (cmd->fdb.has_vni)
			print_vni(&sb, cmd->fdb.vni);
		break;
	case CTL_FDB_ADD:
	case CTL_FDB_DEL:
		print_mac(&sb, cmd->fdb.mac);
		print_vni(&sb, cmd->fdb.vni);
		if (cmd->verb == CTL_FDB_DEL)
			break;
		if (cmd->fdb.dst == CTL_FDB_DST_PORT)
			sb_printf(&sb, " port %s", cmd->fdb.port);
		else if (cmd->fdb.dst == CTL_FDB_DST_REMOTE)
			print_ip(&sb, "remote", &cmd->fdb.remote);
		else
			return -EINVAL;
		break;
	case CTL_SET: {
		const struct ctl_knob_info *info = ctl_knob_info(cmd->set.knob);
		if (!info)
			return -EINVAL;
		if (info->kind == CTL_KNOB_BOOL)
			sb_printf(&sb, " %s %s", info->name, cmd->set.value ? "on" : "off");
		else
			sb_printf(&sb, " %s %u", info->name, cmd->set.value);
		break;
	}
	default:
		break;
	}
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
	return "COMMAND := port add NAME type tap [ vni VNI ] [ netns NS ] [ mtu MTU ]\n"
	       "         | port add NAME type vxlan vni VNI local IP remote IP [ remote IP ... ]\n"
	       "               [ dstport PORT ] [ srcport PORT-PORT ] [ udpcsum { on | off } ]\n"
	       "               [ mtu MTU ]\n"
	       "         | port del NAME\n"
	       "         | port show\n"
	       "         | fdb show [ vni VNI ]\n"
	       "         | fdb add MAC vni VNI { port NAME | remote IP }\n"
	       "         | fdb del MAC vni VNI\n"
	       "         | fdb flush [ vni VNI ]\n"
	       "         | stats [ port NAME ]\n"
	       "         | set KNOB VALUE\n"
	       "         | show knobs\n"
	       "         | diagnose [ port NAME ]\n"
	       "         | version\n"
	       "KNOB VALUE := { gro | gso | tap-tso | udp-gro | udp-segment | rx-csum } { on | off }\n"
	       "            | gro-hold-us 0..1000000 | gro-max-size 1500..65535\n"
	       "            | fdb-ageing SECONDS (0..1000000, 0 = never) | fdb-max 1..16777216\n"
	       "NAME := port name, 1..15 printable characters, no '/' or ':'\n"
	       "NS   := network namespace name, 1..63 printable characters, no '/'\n"
	       "VNI  := 0..16777215    MTU := 68..65535    PORT := 1..65535\n"
	       "IP   := IPv4 a.b.c.d | IPv6 (local and remotes of one port in one family)\n"
	       "MAC  := aa:bb:cc:dd:ee:ff (unicast)\n"
	       "Keywords are matched in full; optional keys come in any order, each once\n"
	       "(remote may repeat with different addresses).\n";
}
