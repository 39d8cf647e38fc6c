/* ctl_parser: the toolkit the grammar files of the command language share
 * (internal to src/ctl; the public API is ctl_cmd.h).
 *
 * The language is one parser split by concern:
 *   ctl_parser.c    this toolkit: the parser state, the one error path,
 *                   one ctl_parse_* per kind of value (number, name,
 *                   address, MAC, on/off, port range), the key-table
 *                   walker, and the matching printers for the formatter;
 *   ctl_cmd_port.c  port add / port del, and the `port NAME` reference of
 *                   stats and diagnose;
 *   ctl_cmd_fdb.c   fdb show / add / del / flush;
 *   ctl_knob.c      the knob table and `set`;
 *   ctl_cmd_capture.c  capture;
 *   ctl_cmd.c       the verb table and the public entry points
 *                   (ctl_cmd_internal.h: what each grammar file gives it).
 * A grammar file only ever sees words through this toolkit, so every
 * refusal has the same shape and every value kind is checked one way.
 *
 * Conventions every function here keeps:
 * - a value parser runs with its keyword at ps->pos - 1, reads the value
 *   after it (ctl_take_value) and leaves ps->pos after what it consumed;
 * - every refusal goes through ctl_fail(), which fills ps->err with
 *   `word N "TEXT": what is wrong, expected WHAT` and returns -EINVAL; a
 *   caller just returns what it got, never writes its own message;
 * - nothing allocates, nothing keeps state between calls. */
#ifndef VX_CTL_CTL_PARSER_H
#define VX_CTL_CTL_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/ctl_types.h"

struct ctl_cmd; /* ctl_cmd.h: the key tables parse into one */

struct ctl_parser {
	int argc;
	const char *const *argv;
	int pos;             /* index of the next word to read */
	int first_remote;    /* port add: word of the first "remote" value,
	                      * named when the families disagree at the end */
	struct ctl_err *err; /* NULL: refusals are not worded */
};

/* word is a 0-based argv index; argc means "after the last word".  The
 * word is quoted with anything unprintable shown as '?', so the message
 * stays one line whatever was typed.  Always returns -EINVAL. */
int ctl_fail(struct ctl_parser *ps, int word, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool ctl_at_end(const struct ctl_parser *ps)
{
	return ps->pos >= ps->argc;
}

/* The value after keyword `key` (at ps->pos - 1); refuses naming what was
 * expected when the command ends there. */
int ctl_take_value(struct ctl_parser *ps, const char *key, const char *expected,
		   const char **value);
/* Refuses any word left after a verb that takes no more. */
int ctl_expect_end(struct ctl_parser *ps, const char *verb);

/* ---- values: each takes its own value word unless said otherwise ------ */

/* Strict unsigned decimal in [min, max]: digits only, no sign, no spaces,
 * no hex, so a config file means one thing.  Checks the word at
 * ps->pos - 1, already taken by the caller (it words `expected`). */
int ctl_parse_u32(struct ctl_parser *ps, const char *key, uint32_t min, uint32_t max,
		  uint32_t *out);
int ctl_parse_vni(struct ctl_parser *ps, uint32_t *vni);
/* Names end up in messages, JSON and config files: printable ASCII without
 * blanks or '/', and for port names (is_netns false) the rules of
 * dev_valid_name() and no ':'.  size includes the NUL. */
int ctl_parse_name(struct ctl_parser *ps, const char *key, size_t size, bool is_netns,
		   char *out);
/* IPv4 or IPv6 (a ':' decides), never unspecified, never v4-mapped (one
 * address, one spelling). */
int ctl_parse_ip(struct ctl_parser *ps, const char *key, struct ctl_ip *ip);
bool ctl_ip_is_multicast(const struct ctl_ip *ip);
/* 0..15 for a hex digit, -1 otherwise. */
int ctl_hex_digit(char c);
/* Exactly aa:bb:cc:dd:ee:ff (either case), any MAC. */
bool ctl_mac_from_text(const char *s, uint8_t mac[6]);
/* Exactly aa:bb:cc:dd:ee:ff, unicast and not zero (a static FDB entry for
 * anything else would never be looked up). */
int ctl_parse_mac(struct ctl_parser *ps, const char *verb, uint8_t mac[6]);
int ctl_parse_onoff(struct ctl_parser *ps, const char *key, bool *out);
/* MIN-MAX, both 1..65535, MIN <= MAX, for `srcport`. */
int ctl_parse_port_range(struct ctl_parser *ps, uint16_t *min, uint16_t *max);

/* ---- key tables -------------------------------------------------------- */

/* Optional `KEY VALUE` pairs after a verb's fixed words.  A table ends
 * with a NULL word.  parse runs with the keyword at ps->pos - 1. */
struct ctl_key_def {
	const char *word;
	uint32_t flag;      /* bit in `given`; 0 = repeatable */
	int (*parse)(struct ctl_parser *ps, struct ctl_cmd *cmd);
	unsigned int types; /* which variants it applies to (port add: 1 <<
	                     * CTL_PORT_*); others use 1 */
};

/* Read `KEY VALUE` pairs until the end; each key at most once unless its
 * flag is 0.  *given collects the flags seen.  `what` names the variant in
 * refusals ("type tap", "fdb del"). */
int ctl_parse_keys(struct ctl_parser *ps, const struct ctl_key_def *keys,
		   unsigned int types, const char *what, struct ctl_cmd *cmd,
		   uint32_t *given);

/* ---- the formatter's side ---------------------------------------------- */

/* A bounded string builder: on overflow it stops and remembers, so a
 * printer never checks each step and ctl_cmd_format() reports -ENOSPC
 * once. */
struct ctl_sbuf {
	char *buf;
	size_t size, len;
	bool overflow;
};

void ctl_sb_printf(struct ctl_sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* " KEY ADDRESS", as inet_ntop prints it */
void ctl_sb_ip(struct ctl_sbuf *sb, const char *key, const struct ctl_ip *ip);
/* " aa:bb:cc:dd:ee:ff" */
void ctl_sb_mac(struct ctl_sbuf *sb, const uint8_t mac[6]);
/* " vni N" */
void ctl_sb_vni(struct ctl_sbuf *sb, uint32_t vni);

#endif /* VX_CTL_CTL_PARSER_H */
