/* ctl_flower_internal: what the three files of the filter grammar share
 * (internal to src/ctl; the public API is ctl_flower.h).
 *
 *   ctl_flower.c         filter add/del/show, the entry points, the
 *                        tc-style value parsers (numbers, VALUE/MASK,
 *                        protocols, prefixes, MACs) and their printers;
 *   ctl_flower_match.c   one parse/print pair per match key, and tc's
 *                        dependency rules between keys;
 *   ctl_flower_action.c  one parse/print pair per action.
 *
 * They keep ctl_parser.h's conventions: a value parser runs with its
 * keyword at ps->pos - 1, every refusal goes through ctl_fail(). */
#ifndef VX_CTL_CTL_FLOWER_INTERNAL_H
#define VX_CTL_CTL_FLOWER_INTERNAL_H

#include "ctl/ctl_flower.h"
#include "ctl/ctl_parser.h"

#include <string.h>

/* ---- values (ctl_flower.c) ------------------------------------------ */

/* tc's numbers (iproute2's get_u*(.., base), strtoul of the whole word):
 * base 0 is 0x hex, 0 octal or decimal; 16 is hex with or without 0x; 10
 * is decimal; FL_BASE_10_16 decimal, else hex.  True if s is one within
 * [0, max]. */
enum { FL_BASE_10_16 = 1 };
bool fl_num_base(const char *s, unsigned int base, uint64_t max, uint64_t *out);
/* fl_num_base(s, 0, ...): tc's base 0 (pref, handle, chain, ...). */
bool fl_num(const char *s, uint64_t max, uint64_t *out);
/* Takes the value word after `key` and reads a number in [min, max]. */
int fl_take_num_base(struct ctl_parser *ps, const char *key, unsigned int base, uint64_t min,
		     uint64_t max, uint64_t *out);
int fl_take_num(struct ctl_parser *ps, const char *key, uint64_t min, uint64_t max,
		uint64_t *out);
/* VALUE or VALUE/MASK, both in [0, max], the value read in vbase, the
 * mask in mbase; without a mask, *mask = max. */
int fl_take_masked(struct ctl_parser *ps, const char *key, uint32_t max, unsigned int vbase,
		   unsigned int mbase, uint32_t *value, uint32_t *mask);
/* PROTO word (ip, ipv6, arp, 802.1Q, 802.1ad, all, 0xHHHH) after `key`. */
int fl_take_protocol(struct ctl_parser *ps, const char *key, uint16_t *eth);
void fl_sb_protocol(struct ctl_sbuf *sb, const char *key, uint16_t eth);
/* ADDR[/LEN|/MASK] after `key`, IPv4 or IPv6; the address is masked. */
int fl_take_prefix(struct ctl_parser *ps, const char *key, struct flower_prefix *p);
void fl_sb_prefix(struct ctl_sbuf *sb, const char *key, const struct flower_prefix *p);
/* MAC[/LEN|/MASK] after `key`, any MAC (broadcast and multicast match too). */
int fl_take_mac(struct ctl_parser *ps, const char *key, uint8_t mac[6], uint8_t mask[6]);
void fl_sb_mac(struct ctl_sbuf *sb, const char *key, const uint8_t mac[6],
	       const uint8_t mask[6]);

/* The grammar's address (ctl_types.h) as a rule's (switch/flower_spec.h)
 * and back: the same family and bytes. */
static inline void fl_ip_from_ctl(struct flower_ip *out, const struct ctl_ip *ip)
{
	memset(out, 0, sizeof(*out)); /* padding too: a match hashes as bytes */
	out->family = ip->family;
	memcpy(out->bytes, ip->bytes, sizeof(out->bytes));
}

static inline struct ctl_ip fl_ip_to_ctl(const struct flower_ip *ip)
{
	struct ctl_ip out = { .family = ip->family };
	memcpy(out.bytes, ip->bytes, sizeof(out.bytes));
	return out;
}

/* ---- match keys (ctl_flower_match.c) ---------------------------------- */

/* Reads MATCH words until `action`/`actions` or the end (ps->pos is left
 * on that word), then checks tc's dependency rules.  skip_hw and skip_sw
 * are taken anywhere among the keys, as f_flower.c's one loop over flower
 * options takes them (`flower vlan_prio 6 skip_hw dst_mac ...` is a line of
 * the kernel's tc_flower.sh): into *flags (flower_spec.given). */
int fl_parse_match(struct ctl_parser *ps, struct flower_match *m, uint32_t *flags);
/* skip_hw (FLOWER_SF_SKIP_HW into *given) or skip_sw (refused) at ps->pos:
 * 1 when taken (ps->pos moves past it), 0 when the word is neither, < 0
 * refused (ctl_flower.c). */
int fl_parse_hw_flag(struct ctl_parser *ps, uint32_t *given);
void fl_format_match(struct ctl_sbuf *sb, const struct flower_match *m);

/* ---- MPLS and ARP keys (ctl_flower_mpls.c) ------------------------------ */

/* Each a parse/print pair of ctl_flower_match.c's key table: `k` is the
 * key word, the value words follow at ps->pos. */
int fl_parse_mpls(struct ctl_parser *ps, const char *k, struct flower_match *m);
void fl_sb_mpls(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);
int fl_parse_mpls_field(struct ctl_parser *ps, const char *k, struct flower_match *m);
/* `mpls lse depth 1 ...` alone, with at least one field, into the older
 * form (mpls_label, mpls_tc, mpls_bos, mpls_ttl), as the kernel stores and
 * dumps it (fl_dump_key_mpls()): one match, one form, so that the two
 * spellings of it are one key (a second is refused as a duplicate, as
 * flower refuses it) and `show config` prints what tc would. */
void fl_mpls_canonical(struct flower_match *m);
void fl_sb_mpls_field(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);
int fl_parse_arp_ip(struct ctl_parser *ps, const char *k, struct flower_match *m);
void fl_sb_arp_ip(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);
int fl_parse_arp_op(struct ctl_parser *ps, const char *k, struct flower_match *m);
void fl_sb_arp_op(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);
int fl_parse_arp_mac(struct ctl_parser *ps, const char *k, struct flower_match *m);
void fl_sb_arp_mac(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);

int fl_parse_enc_tos_ttl(struct ctl_parser *ps, const char *k, struct flower_match *m);
void fl_sb_enc_tos_ttl(struct ctl_sbuf *sb, const char *k, const struct flower_match *m);

/* tc-flower(8) keys vxswitch does not build: the reason, or NULL when w is
 * no such key (ctl_flower_mpls.c). */
const char *fl_unsupported_key(const char *w);

/* ---- actions (ctl_flower_action.c) ------------------------------------ */

/* Reads `action ACTION [action ACTION ...]` to the end; at least one. */
int fl_parse_actions(struct ctl_parser *ps, struct flower_spec *f);
void fl_format_actions(struct ctl_sbuf *sb, const struct flower_spec *f);

/* ---- hook and indev (ctl_flower_egress.c) ------------------------------ */

/* `ingress` or `egress` at ps->pos (egress: FLOWER_SF_EGRESS in f->given).
 * The rule's part of the command: the spec (ctl_flower.rule). */
int fl_take_hook(struct ctl_parser *ps, struct flower_spec *f);
/* "ingress" or "egress", as parsed. */
const char *fl_hook_name(const struct flower_spec *f);
/* `indev NAME` with ps->pos at "indev". */
int fl_parse_indev(struct ctl_parser *ps, struct flower_match *m);
/* " indev NAME" when given (canonical form: right after flower [skip_hw]). */
void fl_format_indev(struct ctl_sbuf *sb, const struct flower_match *m);
struct ctl_print;
/* tc's "\n  indev NAME" ("indev" in the options' JSON, before "keys"). */
void fl_tc_print_indev(struct ctl_print *p, const struct flower_match *m);

#endif /* VX_CTL_CTL_FLOWER_INTERNAL_H */
