/* ctl_flower: filter add/del/show and tc's value kinds (see ctl_flower.h and
 * ctl_flower_internal.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ctl/ctl_flower_internal.h"
#include "switch/flower_table.h"

/* ---- numbers ------------------------------------------------------------- */

/* iproute2's get_u8/get_u16/get_u32(.., base): strtoul() of the whole
 * word.  Base 0: 0x hex, a leading 0 octal, else decimal; base 16: hex
 * with or without 0x; base 10: decimal only.  Unlike strtoul, no blank or
 * sign before the digits (tc would take "+6" as 6 and " 6" too; no
 * operator's line has them). */
bool fl_num_base(const char *s, unsigned int base, uint64_t max, uint64_t *out)
{
	bool hex_prefix = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (base == 0)
		base = hex_prefix ? 16 : s[0] == '0' && s[1] ? 8 : 10;
	if (base == 16 && hex_prefix)
		s += 2;
	uint64_t v = 0;
	if (!*s)
		return false;
	for (; *s; s++) {
		int d = ctl_hex_digit(*s);
		if (d < 0 || (unsigned int)d >= base)
			return false;
		v = v * base + (uint64_t)d;
		if (v > max)
			return false;
	}
	*out = v;
	return true;
}

bool fl_num(const char *s, uint64_t max, uint64_t *out)
{
	return fl_num_base(s, 0, max, out);
}

static const char *base_words(unsigned int base)
{
	return base == 10 ? "decimal" : base == 16 ? "hex, 0x optional" :
	       base == FL_BASE_10_16 ? "decimal, else hex" : "decimal, 0x hex or 0 octal";
}

/* base FL_BASE_10_16: decimal, and if the word is not one, hex (tc's
 * ip_tos/ip_ttl value: get_u8(.., 10), then get_u8(.., 16)). */
static bool num_in(const char *s, unsigned int base, uint64_t max, uint64_t *out)
{
	if (base == FL_BASE_10_16)
		return fl_num_base(s, 10, max, out) || fl_num_base(s, 16, max, out);
	return fl_num_base(s, base, max, out);
}

int fl_take_num_base(struct ctl_parser *ps, const char *key, unsigned int base, uint64_t min,
		     uint64_t max, uint64_t *out)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "a number", &v);
	if (ret)
		return ret;
	if (!num_in(v, base, max, out) || *out < min)
		return ctl_fail(ps, ps->pos - 1,
				"bad number for \"%s\", expected %llu..%llu (%s, as tc reads it)",
				key, (unsigned long long)min, (unsigned long long)max, base_words(base));
	return 0;
}

int fl_take_num(struct ctl_parser *ps, const char *key, uint64_t min, uint64_t max,
		uint64_t *out)
{
	return fl_take_num_base(ps, key, 0, min, max, out);
}

int fl_take_masked(struct ctl_parser *ps, const char *key, uint32_t max, unsigned int vbase,
		   unsigned int mbase, uint32_t *value, uint32_t *mask)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "VALUE[/MASK]", &v);
	if (ret)
		return ret;
	char text[32];
	uint64_t val, msk = max;
	snprintf(text, sizeof(text), "%s", v);
	char *slash = strchr(text, '/');
	if (slash)
		*slash = '\0';
	if (strlen(v) >= sizeof(text) || !num_in(text, vbase, max, &val) ||
	    (slash && !num_in(slash + 1, mbase, max, &msk)))
		return ctl_fail(ps, ps->pos - 1,
				"bad value for \"%s\", expected VALUE[/MASK] within 0..0x%x (VALUE %s, "
				"MASK %s, as tc reads them)", key, max, base_words(vbase),
				base_words(mbase));
	*value = (uint32_t)(val & msk);
	*mask = (uint32_t)msk;
	return 0;
}

/* ---- protocols ------------------------------------------------------------ */

static const struct {
	const char *name;
	uint16_t eth;
} protocols[] = {
	{ "ip", FLOWER_ETH_IP },         { "ipv6", FLOWER_ETH_IPV6 },
	{ "ipv4", FLOWER_ETH_IP }, /* iproute2's ll_proto.c alias; "ip" is printed (found first) */
	{ "arp", FLOWER_ETH_ARP },       { "802.1Q", FLOWER_ETH_8021Q },
	{ "802.1ad", FLOWER_ETH_8021AD }, { "all", FLOWER_ETH_ALL },
	{ "mpls_uc", FLOWER_ETH_MPLS_UC }, { "mpls_mc", FLOWER_ETH_MPLS_MC }, /* ll_proto.c's names */
	{ "rarp", FLOWER_ETH_RARP },
};

int fl_take_protocol(struct ctl_parser *ps, const char *key, uint16_t *eth)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "ip, ipv4, ipv6, arp, rarp, 802.1Q, 802.1ad, mpls_uc, mpls_mc, all or a number", &v);
	if (ret)
		return ret;
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++) {
		if (!strcasecmp(v, protocols[i].name)) {
			*eth = protocols[i].eth;
			return 0;
		}
	}
	uint64_t n;
	/* A number as tc's ll_proto_a2n() reads it (get_be16(.., 0): decimal
	 * or 0x hex; 2048 is ip), above the 802.3 length range (< 0x0600 is a
	 * length, not a type). */
	if (fl_num(v, 0xffff, &n) && n >= 0x0600) {
		*eth = (uint16_t)n;
		return 0;
	}
	return ctl_fail(ps, ps->pos - 1,
			"unknown protocol for \"%s\", expected ip, ipv4, ipv6, arp, rarp, 802.1Q, "
			"802.1ad, mpls_uc, mpls_mc, all or an ethertype 0x0600..0xffff (decimal or 0x hex)", key);
}

void fl_sb_protocol(struct ctl_sbuf *sb, const char *key, uint16_t eth)
{
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++) {
		if (protocols[i].eth == eth) {
			ctl_sb_printf(sb, " %s %s", key, protocols[i].name);
			return;
		}
	}
	ctl_sb_printf(sb, " %s 0x%04x", key, eth);
}

/* ---- masks: /LEN or a mask in the value's own form ------------------------ */

static void mask_from_len(uint8_t *mask, size_t size, unsigned int len)
{
	for (size_t i = 0; i < size; i++) {
		unsigned int bits = len > 8 * i ? len - 8 * (unsigned int)i : 0;
		mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
	}
}

/* The prefix length of mask, or -1 if it is not a prefix. */
static int mask_len(const uint8_t *mask, size_t size)
{
	int len = 0;
	size_t i = 0;
	for (; i < size && mask[i] == 0xff; i++)
		len += 8;
	if (i == size)
		return len;
	uint8_t m = mask[i];
	while (m & 0x80) {
		len++;
		m = (uint8_t)(m << 1);
	}
	if (m)
		return -1;
	for (i++; i < size; i++)
		if (mask[i])
			return -1;
	return len;
}

/* "/LEN" or "/MASK" after the value; `parse_mask` reads the mask form.
 * LEN is read in `base`, as tc does: an address's get_netmask() base 0
 * (0x20 is /32), a MAC's get_unsigned(.., 10). */
static bool read_mask(const char *s, uint8_t *mask, size_t size, unsigned int base,
		      bool (*parse_mask)(const char *s, uint8_t *out))
{
	uint64_t len;
	if (fl_num_base(s, base, 8 * size, &len)) {
		mask_from_len(mask, size, (unsigned int)len);
		return true;
	}
	return parse_mask(s, mask);
}

static void sb_mask(struct ctl_sbuf *sb, const uint8_t *mask, size_t size,
		    void (*print_mask)(struct ctl_sbuf *sb, const uint8_t *m))
{
	int len = mask_len(mask, size);
	if (len == (int)(8 * size))
		return;
	if (len >= 0) {
		ctl_sb_printf(sb, "/%d", len);
		return;
	}
	ctl_sb_printf(sb, "/");
	print_mask(sb, mask);
}

/* ---- prefixes ------------------------------------------------------------- */

static bool parse_v4(const char *s, uint8_t *out)
{
	return !strchr(s, ':') && inet_pton(AF_INET, s, out) == 1;
}

static bool parse_v6(const char *s, uint8_t *out)
{
	return strchr(s, ':') && inet_pton(AF_INET6, s, out) == 1;
}

int fl_take_prefix(struct ctl_parser *ps, const char *key, struct flower_prefix *p)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "ADDRESS[/LEN|/MASK]", &v);
	if (ret)
		return ret;
	char text[INET6_ADDRSTRLEN + 48];
	if (strlen(v) >= sizeof(text))
		return ctl_fail(ps, ps->pos - 1, "bad address for \"%s\"", key);
	snprintf(text, sizeof(text), "%s", v);
	char *slash = strchr(text, '/');
	if (slash)
		*slash++ = '\0';
	memset(p, 0, sizeof(*p));
	bool v6 = strchr(text, ':') != NULL;
	size_t size = v6 ? 16 : 4;
	p->addr.family = p->mask.family = v6 ? AF_INET6 : AF_INET;
	if (!(v6 ? parse_v6 : parse_v4)(text, p->addr.bytes))
		return ctl_fail(ps, ps->pos - 1,
				"bad address for \"%s\", expected an IPv4 or IPv6 address", key);
	mask_from_len(p->mask.bytes, size, 8 * (unsigned int)size);
	if (slash && !read_mask(slash, p->mask.bytes, size, 0, v6 ? parse_v6 : parse_v4))
		return ctl_fail(ps, ps->pos - 1,
				"bad prefix for \"%s\", expected /LEN (0..%zu) or /MASK of the "
				"address's family", key, 8 * size);
	for (size_t i = 0; i < size; i++)
		p->addr.bytes[i] &= p->mask.bytes[i];
	return 0;
}

static void sb_v4(struct ctl_sbuf *sb, const uint8_t *a)
{
	char text[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, a, text, sizeof(text));
	ctl_sb_printf(sb, "%s", text);
}

static void sb_v6(struct ctl_sbuf *sb, const uint8_t *a)
{
	char text[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, a, text, sizeof(text));
	ctl_sb_printf(sb, "%s", text);
}

void fl_sb_prefix(struct ctl_sbuf *sb, const char *key, const struct flower_prefix *p)
{
	bool v6 = p->addr.family == AF_INET6;
	ctl_sb_printf(sb, " %s ", key);
	(v6 ? sb_v6 : sb_v4)(sb, p->addr.bytes);
	sb_mask(sb, p->mask.bytes, v6 ? 16 : 4, v6 ? sb_v6 : sb_v4);
}

/* ---- MACs ----------------------------------------------------------------- */

static void sb_mac(struct ctl_sbuf *sb, const uint8_t *m)
{
	ctl_sb_printf(sb, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

int fl_take_mac(struct ctl_parser *ps, const char *key, uint8_t mac[6], uint8_t mask[6])
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "MAC[/LEN|/MASK]", &v);
	if (ret)
		return ret;
	char text[40];
	if (strlen(v) >= sizeof(text))
		return ctl_fail(ps, ps->pos - 1, "bad MAC for \"%s\"", key);
	snprintf(text, sizeof(text), "%s", v);
	char *slash = strchr(text, '/');
	if (slash)
		*slash++ = '\0';
	if (!ctl_mac_from_text(text, mac))
		return ctl_fail(ps, ps->pos - 1, "bad MAC for \"%s\", expected aa:bb:cc:dd:ee:ff",
				key);
	memset(mask, 0xff, 6);
	if (slash && !read_mask(slash, mask, 6, 10, ctl_mac_from_text))
		return ctl_fail(ps, ps->pos - 1,
				"bad mask for \"%s\", expected /LEN (0..48) or /aa:bb:cc:dd:ee:ff",
				key);
	for (int i = 0; i < 6; i++)
		mac[i] &= mask[i];
	return 0;
}

void fl_sb_mac(struct ctl_sbuf *sb, const char *key, const uint8_t mac[6], const uint8_t mask[6])
{
	ctl_sb_printf(sb, " %s ", key);
	sb_mac(sb, mac);
	sb_mask(sb, mask, 6, sb_mac);
}

/* ---- filter add / del / show -------------------------------------------- */

/* In `allowed` beside the FLOWER_SF_* keys: the verb takes `protocol`. */
#define KEY_PROTOCOL (1u << 31)

static const char *const verb_names[] = {
	[CTL_FILTER_ADD] = "add", [CTL_FILTER_DEL] = "del", [CTL_FILTER_SHOW] = "show",
	[CTL_FILTER_REPLACE] = "replace", [CTL_FILTER_CHANGE] = "change", [CTL_FILTER_GET] = "get",
};

/* One of pref/handle/chain (and protocol where allowed) at ps->pos.
 * *stop set at `flower` (add: left for the caller) or the word ending
 * the other verbs. */
static int parse_filter_key(struct ctl_parser *ps, struct ctl_flower *f, uint32_t allowed, bool add,
			    bool *stop)
{
	int word = ps->pos;
	const char *w = ps->argv[ps->pos++];
	uint32_t flag = 0;
	uint64_t n = 0;
	int ret;
	if (!strcmp(w, "pref") || !strcmp(w, "prio") || !strcmp(w, "priority")) {
		flag = FLOWER_SF_PREF;
		ret = fl_take_num(ps, w, 1, FLOWER_PREF_MAX, &n);
		f->rule.pref = (uint32_t)n;
	} else if (!strcmp(w, "handle")) {
		flag = FLOWER_SF_HANDLE;
		ret = fl_take_num(ps, w, 1, UINT32_MAX, &n);
		f->rule.handle = (uint32_t)n;
	} else if (!strcmp(w, "chain")) {
		flag = FLOWER_SF_CHAIN;
		ret = fl_take_num(ps, w, 0, UINT32_MAX, &n);
		f->rule.chain = (uint32_t)n;
	} else if ((allowed & KEY_PROTOCOL) && !strcmp(w, "protocol")) {
		if (f->rule.match.given & FLOWER_FM_PROTOCOL)
			return ctl_fail(ps, word, "duplicate \"protocol\"");
		f->rule.match.given |= FLOWER_FM_PROTOCOL;
		ret = fl_take_protocol(ps, w, &f->rule.match.protocol);
	} else if (add && !strcmp(w, "flower")) {
		ps->pos--;
		*stop = true;
		return 0;
	} else if (!strcmp(w, "flower") && ctl_at_end(ps)) {
		*stop = true;
		return 0; /* tc's `... handle 1 flower`: the only kind */
	} else {
		return ctl_fail(ps, word, add ? "unknown keyword, expected pref, handle, "
				"chain, protocol or flower" : "unknown keyword, expected %s",
				allowed & KEY_PROTOCOL ? "pref, handle, chain or protocol"
				: allowed & FLOWER_SF_PREF ? "pref, handle or chain" : "chain");
	}
	if (ret)
		return ret;
	if (!(flag & allowed) && flag)
		return ctl_fail(ps, word, "not valid for filter %s", verb_names[f->verb]);
	if (f->rule.given & flag)
		return ctl_fail(ps, word, "duplicate \"%s\"", w);
	f->rule.given |= flag;
	return 0;
}

static bool is_filter_key(const char *w, uint32_t allowed)
{
	return !strcmp(w, "pref") || !strcmp(w, "prio") || !strcmp(w, "priority") ||
	       !strcmp(w, "handle") || !strcmp(w, "chain") ||
	       ((allowed & KEY_PROTOCOL) && !strcmp(w, "protocol"));
}

/* dev PORT, then `ingress` or `egress`; tc takes the keys in any order, and operators'
 * notes say `dev X pref 2 ingress ...`, so keys between dev and ingress are
 * taken here. */
static int parse_dev_ingress(struct ctl_parser *ps, struct ctl_flower *f, uint32_t allowed, bool add)
{
	if (ctl_at_end(ps) || strcmp(ps->argv[ps->pos], "dev"))
		return ctl_fail(ps, ps->pos, "expected \"dev PORT\"");
	ps->pos++;
	int ret = ctl_parse_name(ps, "dev", CTL_NAME_SIZE, false, f->rule.dev);
	if (ret)
		return ret;
	bool stop = false;
	while (!ctl_at_end(ps) && is_filter_key(ps->argv[ps->pos], allowed)) {
		ret = parse_filter_key(ps, f, allowed, add, &stop);
		if (ret)
			return ret;
	}
	return fl_take_hook(ps, &f->rule);
}

/* pref/handle/chain/protocol before `flower` (add) or alone (del, show).
 * `allowed` are the FLOWER_SF_* the verb takes; protocol only for add. */
static int parse_filter_keys(struct ctl_parser *ps, struct ctl_flower *f, uint32_t allowed,
			     bool add)
{
	bool stop = false;
	while (!ctl_at_end(ps) && !stop) {
		int ret = parse_filter_key(ps, f, allowed, add, &stop);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_add(struct ctl_parser *ps, struct ctl_flower *f)
{
	int ret = parse_filter_keys(ps, f, FLOWER_SF_PREF | FLOWER_SF_HANDLE | FLOWER_SF_CHAIN | KEY_PROTOCOL,
				    true);
	if (ret)
		return ret;
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "expected \"flower\", the only classifier");
	ps->pos++; /* "flower" */
	ret = fl_parse_match(ps, &f->rule.match, &f->rule.given);
	return ret ? ret : fl_parse_actions(ps, &f->rule);
}

int fl_parse_hw_flag(struct ctl_parser *ps, uint32_t *given)
{
	const char *w = ps->argv[ps->pos];
	if (!strcmp(w, "skip_hw")) {
		if (*given & FLOWER_SF_SKIP_HW)
			return ctl_fail(ps, ps->pos, "duplicate \"skip_hw\"");
		*given |= FLOWER_SF_SKIP_HW;
		ps->pos++;
		return 1;
	}
	if (!strcmp(w, "skip_sw"))
		return ctl_fail(ps, ps->pos, "refused: vxswitch has no hardware to offload "
				"to, a rule that skips software would never run");
	return 0;
}

/* tc's do_filter(): the verb by any prefix (matches()), in tc's order. */
enum ctl_flower_verb ctl_flower_parse_verb(const char *w)
{
	static const struct {
		const char *name;
		enum ctl_flower_verb verb;
	} verbs[] = {
		{ "add", CTL_FILTER_ADD },    { "change", CTL_FILTER_CHANGE },
		{ "replace", CTL_FILTER_REPLACE }, { "delete", CTL_FILTER_DEL },
		{ "get", CTL_FILTER_GET },    { "list", CTL_FILTER_SHOW },
		{ "show", CTL_FILTER_SHOW },  { "lst", CTL_FILTER_SHOW },
		{ "ls", CTL_FILTER_SHOW }, /* vxctl's own spelling, kept */
	};
	for (size_t i = 0; *w && i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (!strncmp(w, verbs[i].name, strlen(w)))
			return verbs[i].verb;
	return 0;
}

/* The word index of key `w` in the line (it was parsed, so it is there). */
static int word_of(const struct ctl_parser *ps, const char *w)
{
	int i = 2;
	while (i < ps->argc - 1 && strcmp(ps->argv[i], w))
		i++;
	return i;
}

/* What each verb needs of pref/handle/protocol, with tc's reasons. */
static int check_selectors(struct ctl_parser *ps, const struct ctl_flower *f)
{
	bool pref = f->rule.given & FLOWER_SF_PREF, handle = f->rule.given & FLOWER_SF_HANDLE;
	if (handle && !pref && f->verb != CTL_FILTER_ADD && f->verb != CTL_FILTER_REPLACE)
		return ctl_fail(ps, word_of(ps, "handle"), "\"handle\" needs \"pref\": a handle "
				"is unique within one pref only");
	if ((f->verb == CTL_FILTER_CHANGE || f->verb == CTL_FILTER_GET) && !(pref && handle))
		return ctl_fail(ps, 1, "filter %s needs \"pref\" and \"handle\": it names one "
				"existing rule", verb_names[f->verb]);
	if (f->verb == CTL_FILTER_DEL && !pref && (f->rule.match.given & FLOWER_FM_PROTOCOL))
		return ctl_fail(ps, word_of(ps, "protocol"), "cannot flush filters with protocol "
				"set (tc's rule): give \"pref\" too, or no protocol to delete the "
				"whole chain");
	return 0;
}

const char *ctl_flower_verb_name(enum ctl_flower_verb verb)
{
	return verb >= CTL_FILTER_ADD && verb <= CTL_FILTER_GET ? verb_names[verb] : "?";
}

bool ctl_flower_has_rule(const struct ctl_flower *f)
{
	return f->verb == CTL_FILTER_ADD || f->verb == CTL_FILTER_REPLACE ||
	       f->verb == CTL_FILTER_CHANGE;
}

static uint8_t op_kind(enum ctl_flower_verb verb)
{
	switch (verb) {
	case CTL_FILTER_ADD:
		return FLOWER_OP_ADD;
	case CTL_FILTER_DEL:
		return FLOWER_OP_DEL;
	case CTL_FILTER_REPLACE:
		return FLOWER_OP_REPLACE;
	case CTL_FILTER_CHANGE:
		return FLOWER_OP_CHANGE;
	default:
		return 0;
	}
}

void ctl_flower_ops(const struct ctl_flower *cmds, size_t n, struct flower_op *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = (struct flower_op){ .kind = op_kind(cmds[i].verb), .spec = &cmds[i].rule };
}

int ctl_flower_parse(int argc, const char *const *argv, struct ctl_flower *f,
		     struct ctl_err *err)
{
	struct ctl_parser ps = { .argc = argc, .argv = argv, .pos = 0, .err = err };
	memset(f, 0, sizeof(*f));
	if (argc < 1 || strcmp(argv[0], "filter"))
		return ctl_fail(&ps, 0, "expected \"filter\"");
	if (argc < 2)
		return ctl_fail(&ps, 1, "expected add, change, replace, del, get or show");
	ps.pos = 2;
	f->verb = ctl_flower_parse_verb(argv[1]);
	if (!f->verb)
		return ctl_fail(&ps, 1, "unknown filter verb, expected add, change, replace, "
				"del, get or show");
	/* The counters: `filter show -s dev ...`; vxctl's global -s (tc's
	 * `tc -s filter show`) puts this word here (cli/vxctl_opts.h). */
	if ((f->verb == CTL_FILTER_SHOW || f->verb == CTL_FILTER_GET) && ps.pos < argc &&
	    (!strcmp(argv[ps.pos], "-s") || !strcmp(argv[ps.pos], "-stats"))) {
		f->flags |= CTL_FF_STATS;
		ps.pos++;
	}
	/* tc's terse dump (`tc -br filter show`): show only, as tc asks the
	 * kernel for it in a dump and not in a get. */
	if (f->verb == CTL_FILTER_SHOW && ps.pos < argc &&
	    (!strcmp(argv[ps.pos], "-br") || !strcmp(argv[ps.pos], "-brief"))) {
		f->flags |= CTL_FF_BRIEF;
		ps.pos++;
	}
	bool add = ctl_flower_has_rule(f);
	uint32_t allowed = f->verb == CTL_FILTER_SHOW ? FLOWER_SF_CHAIN
			   : FLOWER_SF_PREF | FLOWER_SF_HANDLE | FLOWER_SF_CHAIN | KEY_PROTOCOL;
	int ret = parse_dev_ingress(&ps, f, allowed, add);
	if (ret)
		return ret;
	if (add)
		ret = parse_add(&ps, f);
	else
		ret = parse_filter_keys(&ps, f, allowed, false);
	return ret ? ret : check_selectors(&ps, f);
}

int ctl_flower_format(const struct ctl_flower *f, char *buf, size_t size)
{
	if (f->verb < CTL_FILTER_ADD || f->verb > CTL_FILTER_GET)
		return -EINVAL;
	bool rule = ctl_flower_has_rule(f);
	if (rule &&
	    (f->rule.n_actions < 1 || f->rule.n_actions > FLOWER_MAX_ACTIONS))
		return -EINVAL;
	struct ctl_sbuf sb = { .buf = buf, .size = size };
	if (size)
		buf[0] = '\0';
	ctl_sb_printf(&sb, "filter %s%s%s dev %s %s", verb_names[f->verb],
		      f->flags & CTL_FF_STATS ? " -s" : "", f->flags & CTL_FF_BRIEF ? " -br" : "", f->rule.dev,
		      fl_hook_name(&f->rule));
	if (f->rule.given & FLOWER_SF_PREF)
		ctl_sb_printf(&sb, " pref %u", f->rule.pref);
	if (f->rule.given & FLOWER_SF_HANDLE)
		ctl_sb_printf(&sb, " handle %u", f->rule.handle);
	if (f->rule.given & FLOWER_SF_CHAIN)
		ctl_sb_printf(&sb, " chain %u", f->rule.chain);
	if (f->rule.match.given & FLOWER_FM_PROTOCOL)
		fl_sb_protocol(&sb, "protocol", f->rule.match.protocol);
	if (rule) {
		ctl_sb_printf(&sb, " flower");
		if (f->rule.given & FLOWER_SF_SKIP_HW)
			ctl_sb_printf(&sb, " skip_hw");
		fl_format_indev(&sb, &f->rule.match);
		fl_format_match(&sb, &f->rule.match);
		fl_format_actions(&sb, &f->rule);
	}
	if (sb.overflow)
		return -ENOSPC;
	return (int)sb.len;
}

bool ctl_flower_equal(const struct ctl_flower *a, const struct ctl_flower *b)
{
	return !memcmp(a, b, sizeof(*a));
}

const char *ctl_flower_grammar(void)
{
	return "FILTER := filter add dev PORT HOOK [ pref N ] [ handle N ] [ chain N ]\n"
	       "              [ protocol PROTO ] flower [ MATCH ... ] (skip_hw: anywhere among them)\n"
	       "              action ACTION [ action ACTION ... ]\n"
	       "        | filter { replace | change } ... (as add; replace adds when the handle\n"
	       "              is free, change needs pref and handle of an existing rule)\n"
	       "        | filter del dev PORT HOOK [ pref N [ handle N ] [ protocol PROTO ] ]\n"
	       "              [ chain N ] [ flower ]     (no pref: the whole chain)\n"
	       "        | filter get [ -s ] dev PORT HOOK pref N handle N [ protocol PROTO ]\n"
	       "              [ chain N ] [ flower ]\n"
	       "        | filter show [ -s ] [ -br ] dev PORT HOOK [ chain N ]\n"
	       "              (tc's layout, -j tc's JSON; -s: Sent software = slow path,\n"
	       "              classifier lookups, Sent hardware = fast path, flow-cache hits;\n"
	       "              -br: tc's terse dump; show config prints the filter add lines)\n"
	       "HOOK   := ingress | egress (egress: frames sent out of PORT, after switching)\n"
	       "PROTO  := ip | ipv4 | ipv6 | arp | rarp | 802.1Q | 802.1ad | mpls_uc | mpls_mc\n"
	       "        | all | ETHERTYPE\n"
	       "MATCH  := indev PORT | src_mac MAC[/MASK] | dst_mac MAC[/MASK] | vlan_id ID\n"
	       "        | vlan_prio P\n"
	       "        | vlan_ethtype PROTO | ip_proto { tcp | udp | sctp | icmp | icmpv6 | N }\n"
	       "        | src_ip PREFIX | dst_ip PREFIX | src_port { P | P-P | V/M }\n"
	       "        | dst_port { P | P-P | V/M }\n"
	       "        | tcp_flags V[/M] | ip_tos V[/M] | ip_ttl V[/M]\n"
	       "        | ip_flags [no]frag[/[no]firstfrag] | type N[/M] | code N[/M]\n"
	       "        | enc_key_id VNI | enc_src_ip PREFIX | enc_dst_ip PREFIX\n"
	       "        | enc_dst_port PORT | enc_tos V[/M] | enc_ttl V[/M]\n"
	       "        | mpls_label L | mpls_tc T | mpls_bos B | mpls_ttl T  (protocol mpls_uc|mpls_mc)\n"
	       "        | mpls lse depth D [ label L ] [ tc T ] [ bos B ] [ ttl T ] [ lse ... ]\n"
	       "        | arp_sip PREFIX | arp_tip PREFIX | arp_op { request | reply | N }[/M]\n"
	       "        | arp_sha MAC[/MASK] | arp_tha MAC[/MASK]     (protocol arp|rarp)\n"
	       "ACTION := mirred egress { redirect | mirror } dev PORT | drop | pass\n"
	       "        | continue (on to the rules of the next prefs) | pipe\n"
	       "        | goto chain N | tunnel_key set id VNI src_ip IP dst_ip IP\n"
	       "              [ dst_port N ] [ csum | nocsum ] | tunnel_key unset\n"
	       "        | vlan push id N [ priority P ] [ protocol 802.1Q | 802.1ad ]\n"
	       "        | vlan pop | vlan modify id N [ priority P ]\n";
}
