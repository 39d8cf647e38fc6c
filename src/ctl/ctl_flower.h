/* ctl_flower: tc's `filter` grammar for flower rules, words in, struct out.
 *
 * What?
 *   An operator's `tc filter ...` line with the leading `tc` replaced
 *   parses into a struct ctl_flower, and ctl_flower_format() prints the
 *   canonical form back, so `show config` output can be pasted back in:
 *   parse(split(format(f))) == f, held for every key by the unit tests and
 *   by fuzz/fuzz_flower.c.  The struct is a verb around the rule it names,
 *   a struct flower_spec: the switch's representation of a rule, in tc's
 *   terms (a protocol, a MAC and its mask, a port range, a device *name*
 *   to redirect to), which the grammar fills and prints but does not own
 *   (switch/flower_spec.h).  The switch compiles that spec into a match
 *   over struct flow_key (switch/flower_rule.h) and keeps it to print the
 *   rule back; ctl_flower_ops() hands a batch of commands to it.
 *
 * Grammar (ctl_flower_grammar() prints it):
 *
 *   FILTER := filter add dev PORT HOOK [ pref N ] [ handle N ] [ chain N ]
 *                 [ protocol PROTO ] flower [ skip_hw ] [ MATCH ... ]
 *                 { action | actions } ACTION [ { action | actions } ACTION ... ]
 *           | filter { replace | change } dev PORT HOOK ... (as add)
 *           | filter del dev PORT HOOK [ pref N [ handle N ] [ protocol PROTO ] ]
 *                 [ chain N ] [ flower ]
 *           | filter get [ -s ] dev PORT HOOK pref N handle N [ protocol PROTO ]
 *                 [ chain N ] [ flower ]
 *           | filter show [ -s ] [ -br ] dev PORT HOOK [ chain N ]
 *   HOOK   := ingress | egress   (egress: frames the switch sends out of
 *             PORT, after L2 switching, before encapsulation; the ingress
 *             and the egress of a port are two separate rule lists, as
 *             tc's clsact ffff:fff2 and ffff:fff3)
 *   Verbs by any prefix in tc's order (a, c, r, d, g, l/s): tc's
 *   do_filter().  replace is tc's NLM_F_CREATE: the rule at (chain, pref,
 *   handle) is replaced in the same table change (the datapath sees the
 *   old rule or the new one, never neither), or added when there is none;
 *   change needs the rule to exist; del with a protocol checks the pref's
 *   protocol; del without pref deletes the chain (chain 0 unless given),
 *   as tc does.
 *   PROTO  := ip | ipv4 | ipv6 | arp | 802.1Q | 802.1ad | all | ETHERTYPE
 *             (ipv4 is iproute2's alias of ip; ETHERTYPE 0x0600..0xffff,
 *             decimal or 0x hex as tc's get_be16(.., 0))
 *   MATCH  := indev PORT   (the port the frame came in on: on an ingress
 *             rule it is the rule's port or the rule never matches, as
 *             tc's skb_iif; any position among the keys, printed first)
 *           | src_mac MAC[/MASK|/LEN] | dst_mac MAC[/MASK|/LEN]
 *           | vlan_id 0..4095 | vlan_prio 0..7 | vlan_ethtype PROTO
 *           | ip_proto { tcp | udp | sctp | icmp | icmpv6 | 0..255 }
 *           | src_ip PREFIX | dst_ip PREFIX        (IPv4 or IPv6, /LEN or /MASK)
 *           | src_port P[-P] | dst_port P[-P]   (or VALUE/MASK: 512/0xff00)
 *           | tcp_flags V[/M] | ip_tos V[/M] | ip_ttl V[/M]
 *           | ip_flags { [no]frag | [no]firstfrag }[/{ [no]frag | [no]firstfrag }]
 *           | type V[/M] | code V[/M]          (ICMP / ICMPv6, decimal)
 *           | enc_key_id 0..16777215 | enc_src_ip PREFIX | enc_dst_ip PREFIX
 *           | enc_dst_port 0..65535 | enc_tos V[/M] | enc_ttl V[/M]
 *           | mpls_label L | mpls_tc T | mpls_bos B | mpls_ttl T
 *           | mpls lse depth D [ label L ] [ tc T ] [ bos B ] [ ttl T ] [ lse ... ]
 *           | arp_sip PREFIX | arp_tip PREFIX | arp_op { request | reply | 0..2 }[/M]
 *           | arp_sha MAC[/MASK|/LEN] | arp_tha MAC[/MASK|/LEN]
 *   ACTION := mirred egress { redirect | mirror } dev PORT
 *           | drop | shot | pass | ok | gact { drop | shot | pass | ok }
 *           | goto chain N | gact goto chain N
 *           | continue | pipe | gact { continue | pipe }
 *           | tunnel_key set id VNI src_ip IP dst_ip IP [ dst_port N ]
 *                 [ csum | nocsum ]
 *           | tunnel_key unset
 *           | vlan push id N [ priority 0..7 ] [ protocol 802.1Q | 802.1ad ]
 *           | vlan pop | vlan modify id N [ priority 0..7 ]
 *
 * tc's rules kept here:
 * - Numbers are read by tc's own reader for each key (get_u8/u16/u32 with
 *   base 0, 10 or 16, as f_flower.c, tc_filter.c and the actions do):
 *   the table is docs/FLOWER.md (ip_proto 11 is 0x11, dst_port decimal
 *   only, pref 010 octal 8).
 * - Keywords are whole words (strcmp); protocol names are case-insensitive
 *   as tc's ll_proto_a2n (802.1q == 802.1Q).  `prio`/`priority` are tc's
 *   spellings of `pref` and are accepted; `pref` is printed.
 * - Dependencies, checked when the line is complete and refused naming the
 *   dependent word: ip_proto, ip_tos, ip_ttl and ip_flags need protocol ip
 *   or ipv6 (or vlan_ethtype ip|ipv6 under protocol 802.1Q); src_ip/dst_ip
 *   need the family's protocol; ports need ip_proto tcp, udp or sctp;
 *   tcp_flags needs tcp; type/code need icmp under ip or icmpv6 under ipv6;
 *   vlan_* need protocol 802.1Q or 802.1ad; mpls and mpls_* need mpls_uc or
 *   mpls_mc (protocol, or vlan_ethtype under a VLAN), and one line uses
 *   either `mpls lse ...` or the mpls_* keys, not both; arp_* need arp or
 *   rarp.  tc-flower's other keys (ct_state, vxlan_opts, cvlan_*, ...) are
 *   refused as "tc-flower's key, not supported by vxswitch: WHY".
 * - skip_sw is refused: there is no hardware, a rule skipping software
 *   would never run.  skip_hw is accepted, changes nothing, is printed.
 * - Actions run in order; drop, pass, goto chain and mirred redirect end
 *   the list (tc's "stolen"/terminal verdicts), so an action after one of
 *   them could never run and is refused.
 * - continue ends the rule's list and classification goes on with the
 *   rules of the next pref of the same chain (the kernel's TC_ACT_UNSPEC:
 *   tcf_classify() tries the next filter); pipe does nothing and the list
 *   goes on.  tc's other control verbs (reclassify, trap, jump) and action
 *   kinds are refused naming the word and why, as are control words after
 *   an action (`mirred ... continue`: write `action continue`).
 *
 * Canonical form (what ctl_flower_format() prints): keywords in the order of
 * the grammar above, a match key only when given, addresses masked
 * (10.0.0.1/24 is stored and printed 10.0.0.0/24), a full mask not printed,
 * a prefix mask printed /LEN and any other mask printed in address form,
 * a range MIN-MAX with MIN == MAX printed as one port, tcp_flags and ip_tos
 * in hex, everything else decimal, `action` before every action.
 *
 * Pure functions over argv and buffers: no I/O, no globals, no allocation. */
#ifndef VX_CTL_CTL_FLOWER_H
#define VX_CTL_CTL_FLOWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/ctl_types.h"
#include "switch/flower_spec.h"

_Static_assert((int)FLOWER_NAME_SIZE == (int)CTL_NAME_SIZE, "a rule's port name is a command's");

enum ctl_flower_verb {
	CTL_FILTER_ADD = 1,
	CTL_FILTER_DEL,
	CTL_FILTER_SHOW,
	CTL_FILTER_REPLACE, /* tc's NLM_F_CREATE: the handle's rule replaced, else added */
	CTL_FILTER_CHANGE,  /* tc's change: the handle's rule replaced, which must exist */
	CTL_FILTER_GET,     /* one rule, by pref and handle */
};

/* ctl_flower.flags: how show and get print, not part of the rule. */
enum ctl_flower_flag {
	CTL_FF_STATS = 1 << 0,   /* show -s: with counters */
	CTL_FF_BRIEF = 1 << 1,   /* show -br: tc's terse dump */
};

/* A filter command: a verb and the rule it names (switch/flower_spec.h:
 * its place, match and actions; `egress` where `ingress` goes is
 * FLOWER_SF_EGRESS in rule.given, ctl_flower_egress.c). */
struct ctl_flower {
	enum ctl_flower_verb verb;
	uint32_t flags;           /* CTL_FF_* */
	struct flower_spec rule;  /* match and actions: add, replace, change */
};

/* Parse argv[0..argc-1], argv[0] being "filter".  Zeroes *f first (two
 * results compare with memcmp), then fills it.  Returns 0, or -EINVAL with
 * *err filled as ctl_cmd_parse() does (err may be NULL). */
int ctl_flower_parse(int argc, const char *const *argv, struct ctl_flower *f,
		     struct ctl_err *err);

/* The canonical line, from "filter" on, NUL-terminated.  Returns its length,
 * -ENOSPC when size is too small, -EINVAL for a struct the parser cannot
 * produce. */
int ctl_flower_format(const struct ctl_flower *f, char *buf, size_t size);

bool ctl_flower_equal(const struct ctl_flower *a, const struct ctl_flower *b);

/* The verb of the word after "filter", by tc's prefixes; 0 for none. */
enum ctl_flower_verb ctl_flower_parse_verb(const char *w);

/* The verb's canonical word ("add", "del", "show", "replace", "change",
 * "get"); "?" for another value. */
const char *ctl_flower_verb_name(enum ctl_flower_verb verb);

/* Whether the verb carries a rule (match and actions): add, replace,
 * change. */
bool ctl_flower_has_rule(const struct ctl_flower *f);

struct flower_op;

/* out[0..n-1]: cmds[0..n-1] as a batch of the switch (switch/
 * flower_table.h): each verb's op (add, del, replace, change; 0 for show
 * and get, which flower_table_apply() refuses) and a pointer to its rule,
 * valid while cmds is. */
void ctl_flower_ops(const struct ctl_flower *cmds, size_t n, struct flower_op *out);

/* What `filter show -s` adds to a rule, split as tc splits hardware from
 * software: fast path = flow-cache hits, slow path = classifier lookups. */
struct ctl_flower_stats {
	uint64_t installed_sec;  /* seconds since the rule was added */
	int64_t used_sec;        /* seconds since a frame last matched; -1 never */
	uint64_t fast_packets, fast_bytes;
	uint64_t slow_packets, slow_bytes;
};

struct ctl_print;

/* `filter show|get [-s] [-j]` in iproute2 6.1's layout, as `tc filter
 * show dev D ingress` prints the same rules from the kernel
 * (ctl_flower_print.c, ctl_flower_print_act.c; docs/FLOWER.md has an
 * example, tests/unit/ctl/test_ctl_flower_show.c the golden output):
 *
 *   filter protocol ip pref 2 flower chain 0 
 *   filter protocol ip pref 2 flower chain 0 handle 0x1 
 *     eth_type ipv4
 *     ip_proto tcp
 *     dst_port 80
 *     not_in_hw
 *   	action order 1: mirred (Egress Redirect to device vx0) stolen
 *   	index 1 ref 1 bind 1 installed 971 sec used 67 sec      (-s: times)
 *   	Action statistics:                                      (-s)
 *   	Sent 560 bytes 6 pkt (dropped 0, overlimits 0 requeues 0) 
 *   	Sent software 60 bytes 1 pkt
 *   	Sent hardware 500 bytes 5 pkt
 *   	backlog 0b 0p requeues 0
 *
 * (each line as tc ends it, trailing blanks included, and a blank line
 * after each action).  The first line is the kernel's entry for a (chain,
 * pref) before its rules: ctl_flower_print_pref(), which the caller prints
 * before the first rule of each pref of a dump (not for get).  Software is
 * the slow path (classifier lookups), hardware the fast path (flow-cache
 * hits).  In JSON (an element each of the caller's array) tc's schema:
 * {"protocol", "pref", "kind": "flower", "chain", "options": {"handle",
 * "keys": {...}, "not_in_hw": true, "actions": [{"order", "kind", ...,
 * "control_action": {"type"}, "index", "ref", "bind", ["installed",
 * "last_used", "stats": {"bytes", "packets", "drops", "overlimits",
 * "requeues", ["sw_bytes", "sw_packets", "hw_bytes", "hw_packets"],
 * "backlog", "qlen"}]}]}}.  f's pref, handle and chain are the rule's;
 * act_index[i] is action i's index (NULL: i + 1); st NULL without -s.
 * With f->verb CTL_FILTER_GET the rule is printed as tc prints its get
 * answer: "filter ingress protocol ..." ("ingress": true in JSON; "egress"
 * for a rule on the egress), tc's get having no parent filter to leave
 * the parent out with (a show leaves it out: the kernel dumps the parent
 * asked for, ffff:fff2 or ffff:fff3).  `indev` prints after the handle,
 * before the keys ("indev" in "options", outside "keys"); with f->verb
 * CTL_FILTER_SHOW and FLOWER_SF_CHAIN in f->rule.given the chain is left out, as
 * tc leaves out the chain a `show ... chain N` asked for. */
void ctl_flower_print_pref(struct ctl_print *p, const struct ctl_flower *f);
int ctl_flower_print_rule(struct ctl_print *p, const struct ctl_flower *f,
			  const uint32_t *act_index, const struct ctl_flower_stats *st);
/* `filter show -br`: the rule as tc prints the kernel's terse dump
 * (TCA_DUMP_FLAGS_TERSE, cls_flower's fl_terse_dump): the handle line,
 * no keys, the flags, each action's kind only, and with st the counters:
 *
 *   filter protocol ip pref 2 flower chain 0 handle 0x1 
 *     not_in_hw
 *   	action order 1: mirred 
 *
 * (with -s "mirred \tAction statistics:" and the lines above, as tc runs
 * them together).  JSON: {..., "options": {"handle", "keys": {},
 * "not_in_hw", "actions": [{"order", "kind", ["stats"]}]}}. */
void ctl_flower_print_brief(struct ctl_print *p, const struct ctl_flower *f,
			    const struct ctl_flower_stats *st);

/* The grammar above, for --help (static, ends in '\n'). */
const char *ctl_flower_grammar(void);

#endif /* VX_CTL_CTL_FLOWER_H */
