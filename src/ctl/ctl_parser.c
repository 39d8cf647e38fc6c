/* ctl_parser: the toolkit the grammar files share (see ctl_parser.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_parser.h"

/* word is a 0-based argv index; argc means "after the last word".  The
 * word is quoted with anything unprintable shown as '?', so the message
 * stays one line whatever was typed. */
int ctl_fail(struct ctl_parser *ps, int word, const char *fmt, ...)
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

/* The value after keyword `key` (at ps->pos - 1); fails naming what was
 * expected when the command ends there. */
int ctl_take_value(struct ctl_parser *ps, const char *key, const char *expected,
		      const char **value)
{
	if (ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "missing value after \"%s\", expected %s",
			    key, expected);
	*value = ps->argv[ps->pos++];
	return 0;
}

int ctl_expect_end(struct ctl_parser *ps, const char *verb)
{
	if (!ctl_at_end(ps))
		return ctl_fail(ps, ps->pos, "unexpected word, \"%s\" takes no more arguments",
			    verb);
	return 0;
}

/* ---- one parse_* per kind of value ------------------------------------ */

/* Strict unsigned decimal: digits only, no sign, no spaces, no hex. */
int ctl_parse_u32(struct ctl_parser *ps, const char *key, uint32_t min,
		     uint32_t max, uint32_t *out)
{
	int word = ps->pos - 1;
	const char *s = ps->argv[word];
	uint64_t v = 0;

	if (!*s)
		return ctl_fail(ps, word, "bad number for \"%s\", expected %u..%u", key, min, max);
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return ctl_fail(ps, word, "bad number for \"%s\", expected %u..%u",
				    key, min, max);
		v = v * 10 + (uint64_t)(*c - '0');
		if (v > UINT32_MAX)
			break;
	}
	if (v < min || v > max)
		return ctl_fail(ps, word, "\"%s\" out of range, expected %u..%u", key, min, max);
	*out = (uint32_t)v;
	return 0;
}

int ctl_parse_vni(struct ctl_parser *ps, uint32_t *vni)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, "vni", "VNI (0..16777215)", &v);
	return ret ? ret : ctl_parse_u32(ps, "vni", 0, CTL_VNI_MAX, vni);
}

/* Names end up in messages, JSON and config files: keep them to printable
 * ASCII without blanks, and for port names the rules of dev_valid_name(). */
int ctl_parse_name(struct ctl_parser *ps, const char *key, size_t size,
		      bool is_netns, char *out)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, is_netns ? "NS" : "NAME", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	size_t len = strlen(v);
	if (len == 0 || len >= size)
		return ctl_fail(ps, word, "bad name for \"%s\", expected 1..%zu characters",
			    key, size - 1);
	if (!strcmp(v, ".") || !strcmp(v, ".."))
		return ctl_fail(ps, word, "bad name for \"%s\", \".\" and \"..\" are reserved", key);
	for (const char *c = v; *c; c++) {
		bool printable = *c > ' ' && *c < 0x7f;
		if (!printable || *c == '/' || (!is_netns && *c == ':'))
			return ctl_fail(ps, word,
				    "bad name for \"%s\", expected printable characters other than %s",
				    key, is_netns ? "'/'" : "'/' and ':'");
	}
	memcpy(out, v, len + 1);
	return 0;
}

int ctl_parse_ip(struct ctl_parser *ps, const char *key, struct ctl_ip *ip)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "IP (IPv4 or IPv6 address)", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	memset(ip, 0, sizeof(*ip));
	if (strchr(v, ':')) {
		ip->family = AF_INET6;
		if (inet_pton(AF_INET6, v, &ip->v6) != 1)
			return ctl_fail(ps, word, "bad IPv6 address for \"%s\"", key);
		if (IN6_IS_ADDR_V4MAPPED(&ip->v6))
			return ctl_fail(ps, word, "IPv4-mapped address for \"%s\", write it as IPv4",
				    key);
		if (IN6_IS_ADDR_UNSPECIFIED(&ip->v6))
			return ctl_fail(ps, word, "unspecified address for \"%s\"", key);
	} else {
		ip->family = AF_INET;
		if (inet_pton(AF_INET, v, &ip->v4) != 1)
			return ctl_fail(ps, word, "bad IP address for \"%s\", expected IPv4 a.b.c.d or IPv6",
				    key);
		if (ip->v4.s_addr == htonl(INADDR_ANY))
			return ctl_fail(ps, word, "unspecified address for \"%s\"", key);
	}
	return 0;
}

bool ctl_ip_is_multicast(const struct ctl_ip *ip)
{
	if (ip->family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(&ip->v6);
	return IN_MULTICAST(ntohl(ip->v4.s_addr));
}

int ctl_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool ctl_mac_from_text(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = ctl_hex_digit(s[3 * i]), lo = ctl_hex_digit(s[3 * i + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[3 * i + 2] != ':'))
			return false;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/* Exactly aa:bb:cc:dd:ee:ff; a static FDB entry must be a unicast address
 * (a multicast or zero MAC would never be looked up as a destination). */
int ctl_parse_mac(struct ctl_parser *ps, const char *verb, uint8_t mac[6])
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, verb, "MAC (aa:bb:cc:dd:ee:ff)", &v);
	if (ret)
		return ret;
	int word = ps->pos - 1;
	if (!ctl_mac_from_text(v, mac))
		return ctl_fail(ps, word, "bad MAC, expected aa:bb:cc:dd:ee:ff");
	if (mac[0] & 1)
		return ctl_fail(ps, word, "multicast MAC, expected a unicast MAC");
	if (!(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return ctl_fail(ps, word, "zero MAC, expected a unicast MAC");
	return 0;
}

int ctl_parse_onoff(struct ctl_parser *ps, const char *key, bool *out)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, key, "on or off", &v);
	if (ret)
		return ret;
	if (!strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "off"))
		*out = false;
	else
		return ctl_fail(ps, ps->pos - 1, "bad value for \"%s\", expected on or off", key);
	return 0;
}

/* MIN-MAX, both 1..65535, MIN <= MAX. */
int ctl_parse_port_range(struct ctl_parser *ps, uint16_t *min, uint16_t *max)
{
	const char *v = NULL;
	int ret = ctl_take_value(ps, "srcport", "MIN-MAX (1..65535)", &v);
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
		return ctl_fail(ps, word, "bad port range for \"srcport\", expected MIN-MAX within 1..65535");
	if (lo > hi)
		return ctl_fail(ps, word, "port range for \"srcport\" has MIN > MAX");
	*min = (uint16_t)lo;
	*max = (uint16_t)hi;
	return 0;
}

/* ---- key tables -------------------------------------------------------- */

static void list_keys(const struct ctl_key_def *keys, unsigned int types, char *buf,
		      size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	for (const struct ctl_key_def *k = keys; k->word; k++) {
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
int ctl_parse_keys(struct ctl_parser *ps, const struct ctl_key_def *keys, unsigned int types,
		      const char *what, struct ctl_cmd *cmd, uint32_t *given)
{
	while (!ctl_at_end(ps)) {
		int word = ps->pos;
		const char *w = ps->argv[ps->pos++];
		const struct ctl_key_def *k, *any_type = NULL;
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
				return ctl_fail(ps, word, "not valid for %s, expected one of: %s",
					    what, expected);
			if (!expected[0])
				return ctl_fail(ps, word, "unexpected word, \"%s\" takes no more arguments",
					    what);
			return ctl_fail(ps, word, "unknown keyword, expected one of: %s", expected);
		}
		if (k->flag && (*given & k->flag))
			return ctl_fail(ps, word, "duplicate \"%s\"", k->word);
		int ret = k->parse(ps, cmd);
		if (ret)
			return ret;
		*given |= k->flag;
	}
	return 0;
}

/* ---- printers for ctl_cmd_format() ------------------------------------ */

void ctl_sb_printf(struct ctl_sbuf *sb, const char *fmt, ...)
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

void ctl_sb_ip(struct ctl_sbuf *sb, const char *key, const struct ctl_ip *ip)
{
	char text[INET6_ADDRSTRLEN];
	if (!inet_ntop(ip->family, ip->bytes, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	ctl_sb_printf(sb, " %s %s", key, text);
}

void ctl_sb_mac(struct ctl_sbuf *sb, const uint8_t mac[6])
{
	ctl_sb_printf(sb, " %02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		  mac[4], mac[5]);
}

void ctl_sb_vni(struct ctl_sbuf *sb, uint32_t vni)
{
	ctl_sb_printf(sb, " vni %u", vni);
}
