/* Unit tests for the filter grammar (src/ctl/ctl_flower*.c): every match key
 * and every action parses into the right fields and prints back in
 * canonical form, the canonical form parses back to the same struct, tc's
 * other spellings print canonically, and every refusal names its word. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "ctl/ctl_print.h"

static int parse_line(const char *line, struct ctl_flower *f, struct ctl_err *err)
{
	char copy[1024];
	char *words[CTL_MAX_WORDS + 8];
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS + 8);
	assert_true(n >= 0);
	return ctl_flower_parse(n, (const char *const *)words, f, err);
}

static void parse_ok(const char *line, struct ctl_flower *f)
{
	struct ctl_err err;
	if (parse_line(line, f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
}

/* line parses, prints as `canonical`, which parses to the same struct. */
static void check_canonical(const char *line, const char *canonical)
{
	struct ctl_flower f, again;
	char text[1024];
	parse_ok(line, &f);
	int len = ctl_flower_format(&f, text, sizeof(text));
	assert_true(len > 0);
	assert_int_equal((size_t)len, strlen(text));
	if (strcmp(text, canonical))
		fail_msg("\"%s\"\n  printed \"%s\"\n expected \"%s\"", line, text, canonical);
	parse_ok(text, &again);
	assert_true(ctl_flower_equal(&f, &again));
}

static void check_round_trip(const char *line)
{
	check_canonical(line, line);
}

#define ADD "filter add dev vnet0 ingress "
#define RD " action mirred egress redirect dev vxlan0"

/* ---- every key, printed back ----------------------------------------------- */

static void test_filter_keys(void **state)
{
	(void)state;
	check_round_trip(ADD "pref 2 protocol ip flower" RD);
	check_round_trip(ADD "pref 1 handle 7 chain 3 protocol arp flower skip_hw" RD);
	check_round_trip(ADD "protocol ipv6 flower" RD);
	check_round_trip(ADD "protocol 802.1ad flower" RD);
	check_round_trip(ADD "protocol all flower" RD);
	check_round_trip(ADD "protocol 0x88cc flower" RD);
	check_round_trip(ADD "flower" RD);
	/* tc's other spellings */
	check_canonical(ADD "prio 5 handle 0x10 protocol IP flower" RD,
			ADD "pref 5 handle 16 protocol ip flower" RD);
	check_canonical(ADD "priority 5 protocol 802.1q flower actions drop",
			ADD "pref 5 protocol 802.1Q flower action drop");
	check_canonical(ADD "protocol 0x0800 flower" RD, ADD "protocol ip flower" RD);
}

static void test_l2_keys(void **state)
{
	(void)state;
	check_round_trip(ADD "flower dst_mac 02:00:00:00:00:01 src_mac ff:ff:ff:ff:ff:ff" RD);
	check_round_trip(ADD "flower dst_mac 02:00:00:00:00:00/24" RD);
	check_round_trip(ADD "flower src_mac 01:00:00:00:00:00/01:00:00:00:00:00" RD);
	check_round_trip(ADD "flower dst_mac 02:00:00:00:00:00/ff:00:ff:00:00:00" RD);
	/* the address is stored masked; a full mask is not printed */
	check_canonical(ADD "flower dst_mac 02:AB:CD:00:00:01/ff:ff:ff:00:00:00" RD,
			ADD "flower dst_mac 02:ab:cd:00:00:00/24" RD);
	check_canonical(ADD "flower dst_mac 02:00:00:00:00:01/48" RD,
			ADD "flower dst_mac 02:00:00:00:00:01" RD);
	check_round_trip(ADD "protocol 802.1Q flower vlan_id 100 vlan_prio 5 vlan_ethtype ip" RD);
	check_round_trip(ADD "protocol 802.1Q flower vlan_ethtype 802.1Q" RD);

	struct ctl_flower f;
	parse_ok(ADD "protocol 802.1Q flower vlan_id 4095 vlan_prio 7 vlan_ethtype ipv6" RD, &f);
	assert_int_equal(f.rule.match.protocol, 0x8100);
	assert_int_equal(f.rule.match.vlan_id, 4095);
	assert_int_equal(f.rule.match.vlan_prio, 7);
	assert_int_equal(f.rule.match.vlan_ethtype, 0x86dd);
}

static void test_l3_keys(void **state)
{
	(void)state;
	/* the line; tc prints ip_proto first */
	check_canonical(ADD "pref 2 protocol ip flower dst_ip 10.0.0.0/24 ip_proto tcp dst_port 80" RD,
			ADD "pref 2 protocol ip flower ip_proto tcp dst_ip 10.0.0.0/24 dst_port 80" RD);
	check_canonical(ADD "protocol ip flower src_ip 10.1.2.3/255.255.0.0" RD,
			ADD "protocol ip flower src_ip 10.1.0.0/16" RD);
	check_canonical(ADD "protocol ip flower src_ip 10.1.2.3/32" RD,
			ADD "protocol ip flower src_ip 10.1.2.3" RD);
	check_canonical(ADD "protocol ip flower src_ip 10.1.2.3/255.0.255.0" RD,
			ADD "protocol ip flower src_ip 10.0.2.0/255.0.255.0" RD);
	check_round_trip(ADD "protocol ip flower src_ip 0.0.0.0/0" RD);
	check_round_trip(ADD "protocol ipv6 flower src_ip 2001:db8::/32 dst_ip 2001:db8::1" RD);
	check_canonical(ADD "protocol ipv6 flower dst_ip 2001:db8::1:2/ffff:ffff::" RD,
			ADD "protocol ipv6 flower dst_ip 2001:db8::/32" RD);
	/* tc reads a numeric ip_proto in hex (get_u8(.., 16)): 47 is 0x47 */
	check_canonical(ADD "protocol ip flower ip_proto 47" RD, ADD "protocol ip flower ip_proto 0x47" RD);
	check_round_trip(ADD "protocol ip flower ip_proto 0x2f" RD);
	check_round_trip(ADD "protocol ip flower ip_proto udp ip_tos 0x10/0xfc ip_ttl 64" RD);
	check_canonical(ADD "protocol ip flower ip_tos 16 ip_ttl 0x40/0xff" RD,
			ADD "protocol ip flower ip_tos 0x10 ip_ttl 64" RD);
	check_canonical(ADD "protocol ip flower ip_ttl 1/0xfe" RD, ADD "protocol ip flower ip_ttl 0/0xfe" RD);
	check_round_trip(ADD "protocol ip flower ip_flags frag" RD);
	check_round_trip(ADD "protocol ip flower ip_flags nofrag" RD);
	check_round_trip(ADD "protocol ip flower ip_flags frag/firstfrag" RD);
	check_round_trip(ADD "protocol ipv6 flower ip_flags frag/nofirstfrag" RD);
	check_round_trip(ADD "protocol ip flower ip_flags nofirstfrag" RD);
	check_canonical(ADD "protocol ip flower ip_flags firstfrag/frag" RD,
			ADD "protocol ip flower ip_flags frag/firstfrag" RD);

	struct ctl_flower f;
	parse_ok(ADD "protocol ip flower dst_ip 192.0.2.77/28" RD, &f);
	assert_int_equal(f.rule.match.dst_ip.addr.family, AF_INET);
	assert_int_equal(ntohl(f.rule.match.dst_ip.addr.v4.s_addr), 0xc0000240);
	assert_int_equal(ntohl(f.rule.match.dst_ip.mask.v4.s_addr), 0xfffffff0);
}

static void test_l4_keys(void **state)
{
	(void)state;
	check_round_trip(ADD "protocol ip flower ip_proto tcp src_port 1024-65535 dst_port 22" RD);
	check_round_trip(ADD "protocol ipv6 flower ip_proto udp dst_port 1" RD);
	check_round_trip(ADD "protocol ip flower ip_proto sctp src_port 5000" RD);
	check_round_trip(ADD "protocol ip flower ip_proto tcp tcp_flags 0x2/0x12" RD);
	check_canonical(ADD "protocol ip flower ip_proto tcp tcp_flags 0x10" RD,
			ADD "protocol ip flower ip_proto tcp tcp_flags 0x10/0xfff" RD);
	check_round_trip(ADD "protocol ip flower ip_proto icmp type 8 code 0" RD);
	check_round_trip(ADD "protocol ipv6 flower ip_proto icmpv6 type 135" RD);

	struct ctl_flower f;
	parse_ok(ADD "protocol ip flower ip_proto tcp src_port 10-20 tcp_flags 0x3/0x7" RD, &f);
	assert_int_equal(f.rule.match.src_port_min, 10);
	assert_int_equal(f.rule.match.src_port_max, 20);
	assert_int_equal(f.rule.match.tcp_flags, 0x3);
	assert_int_equal(f.rule.match.tcp_flags_mask, 0x7);
}

static void test_tunnel_keys(void **state)
{
	(void)state;
	check_round_trip(ADD "flower enc_key_id 42 enc_src_ip 198.51.100.1 enc_dst_ip "
			 "198.51.100.0/24 enc_dst_port 4789" RD);
	check_round_trip(ADD "flower enc_src_ip 2001:db8::1 enc_dst_ip 2001:db8::2" RD);
	check_round_trip(ADD "flower enc_key_id 16777215" RD);
	check_canonical(ADD "flower enc_dst_port 4789 enc_key_id 42" RD,
			ADD "flower enc_key_id 42 enc_dst_port 4789" RD);
}

/* ---- every action ---------------------------------------------------------- */

static void test_actions(void **state)
{
	(void)state;
	check_round_trip(ADD "flower action mirred egress mirror dev tap1" RD);
	check_round_trip(ADD "flower action drop");
	check_round_trip(ADD "flower action pass");
	check_round_trip(ADD "flower action goto chain 7");
	check_round_trip(ADD "flower action tunnel_key set id 42 src_ip 198.51.100.1 dst_ip "
			 "198.51.100.2" RD);
	check_round_trip(ADD "flower action tunnel_key set id 0 src_ip 2001:db8::1 dst_ip "
			 "2001:db8::2 dst_port 8472 nocsum" RD);
	check_round_trip(ADD "flower action tunnel_key set id 1 src_ip 198.51.100.1 dst_ip "
			 "198.51.100.2 csum" RD);
	check_round_trip(ADD "flower action tunnel_key unset action pass");
	check_round_trip(ADD "flower action vlan push id 100" RD);
	check_round_trip(ADD "flower action vlan push id 100 priority 3 protocol 802.1ad" RD);
	check_round_trip(ADD "flower action vlan pop action goto chain 1");
	check_round_trip(ADD "flower action vlan modify id 5 priority 0" RD);
	check_round_trip(ADD "flower action vlan pop action vlan push id 1 action vlan modify id 2 "
			 "action tunnel_key unset action mirred egress mirror dev a action "
			 "mirred egress mirror dev b action mirred egress mirror dev c action drop");
	/* tc's other spellings */
	check_canonical(ADD "flower action gact drop", ADD "flower action drop");
	check_canonical(ADD "flower action shot", ADD "flower action drop");
	check_canonical(ADD "flower action gact ok", ADD "flower action pass");
	check_canonical(ADD "flower action ok", ADD "flower action pass");
	check_canonical(ADD "flower action gact goto chain 2", ADD "flower action goto chain 2");
	check_canonical(ADD "flower actions tunnel_key set dst_port 4789 dst_ip 198.51.100.2 "
			"src_ip 198.51.100.1 id 9 actions drop",
			ADD "flower action tunnel_key set id 9 src_ip 198.51.100.1 dst_ip "
			"198.51.100.2 dst_port 4789 action drop");

	struct ctl_flower f;
	parse_ok(ADD "flower action tunnel_key set id 5 src_ip 198.51.100.1 dst_ip 198.51.100.2" RD,
		 &f);
	assert_int_equal(f.rule.n_actions, 2);
	assert_int_equal(f.rule.actions[0].type, FLOWER_ACT_TUNNEL_SET);
	assert_int_equal(f.rule.actions[0].dst_port, 4789);
	assert_int_equal(f.rule.actions[1].type, FLOWER_ACT_REDIRECT);
	assert_string_equal(f.rule.actions[1].dev, "vxlan0");
}

static void test_del_show(void **state)
{
	(void)state;
	check_round_trip("filter del dev vnet0 ingress pref 2 handle 1");
	check_round_trip("filter del dev vnet0 ingress pref 2");
	check_round_trip("filter del dev vnet0 ingress");
	check_round_trip("filter del dev vnet0 ingress pref 3 chain 4");
	check_round_trip("filter show dev vnet0 ingress");
	check_round_trip("filter show dev vnet0 ingress chain 1");
	check_canonical("filter del dev vnet0 ingress pref 2 handle 0x1 flower",
			"filter del dev vnet0 ingress pref 2 handle 1");
	check_canonical("filter ls dev vnet0 ingress", "filter show dev vnet0 ingress");
	/* tc's order of the seed 002 notes: keys between dev and ingress */
	check_canonical("filter add dev vnet0 pref 2 ingress protocol ip flower skip_hw action drop",
			"filter add dev vnet0 ingress pref 2 protocol ip flower skip_hw action drop");
	/* skip_hw among the keys (the kernel's tc_flower.sh writes `flower
	 * vlan_prio 6 skip_hw dst_mac ...`): the same rule as skip_hw first */
	check_canonical("filter add dev vnet0 ingress protocol 802.1q pref 1 handle 101 flower vlan_prio 6 "
			"skip_hw dst_mac 02:00:00:00:00:02 action drop",
			"filter add dev vnet0 ingress pref 1 handle 101 protocol 802.1Q flower skip_hw "
			"dst_mac 02:00:00:00:00:02 vlan_prio 6 action drop");
	check_canonical("filter del dev vnet0 pref 2 handle 1 ingress",
			"filter del dev vnet0 ingress pref 2 handle 1");
	check_round_trip("filter show -s dev vnet0 ingress");
	check_canonical("filter show -stats dev vnet0 ingress chain 2",
			"filter show -s dev vnet0 ingress chain 2");
	struct ctl_flower f;
	parse_ok("filter del dev vnet0 ingress prio 9 handle 3", &f);
	assert_int_equal(f.verb, CTL_FILTER_DEL);
	assert_int_equal(f.rule.pref, 9);
	assert_int_equal(f.rule.handle, 3);
}

static int n_bad;
static void refused(const char *line, int word, const char *text)
{
	struct ctl_flower f;
	struct ctl_err err;
	int ret = parse_line(line, &f, &err);
	if (ret != -EINVAL)
		fail_msg("\"%s\" accepted", line);
	if (err.word != word || !strstr(err.msg, text))
		print_error("\"%s\": word %d \"%s\", expected word %d with \"%s\"\n", line, err.word,
			 err.msg, word, text), n_bad++;
	assert_null(strchr(err.msg, '\n'));
}

/* Match keys and numbers: every refusal names its word. */
static void test_refusals(void **state)
{
	(void)state;
	/* an unknown field */
	refused(ADD "protocol ip flower dst_iq 10.0.0.1" RD, 9, "unknown flower key");
	/* a bad prefix, a bad address, a mask of the wrong family */
	refused(ADD "protocol ip flower dst_ip 10.0.0.0/33" RD, 10, "bad prefix");
	refused(ADD "protocol ip flower dst_ip 10.0.0.0/255.0.255.x" RD, 10, "bad prefix");
	refused(ADD "protocol ip flower dst_ip 10.0.0.256" RD, 10, "bad address");
	refused(ADD "protocol ipv6 flower dst_ip 2001:db8::/255.0.0.0" RD, 10, "bad prefix");
	refused(ADD "flower dst_mac 02:00:00:00:00:0g" RD, 8, "bad MAC");
	refused(ADD "flower dst_mac 02:00:00:00:00:00/49" RD, 8, "bad mask");
	/* a missing action target, a missing action */
	refused(ADD "protocol ip flower action mirred egress redirect", 13, "dev PORT");
	refused(ADD "protocol ip flower action mirred egress redirect dev", 14, "missing value");
	refused(ADD "protocol ip flower", 9, "needs an action");
	refused(ADD "protocol ip flower action", 10, "missing action");
	refused(ADD "protocol ip flower action mirred ingress redirect dev x", 11, "egress");
	/* tc's dependency rules */
	refused(ADD "flower ip_proto tcp" RD, 7, "needs protocol ip or ipv6");
	refused(ADD "protocol arp flower ip_proto tcp" RD, 9, "needs protocol ip or ipv6");
	refused(ADD "protocol ip flower dst_port 80" RD, 9, "needs ip_proto tcp, udp or sctp");
	refused(ADD "protocol ip flower ip_proto icmp dst_port 80" RD, 11, "needs ip_proto tcp");
	refused(ADD "protocol ip flower ip_proto udp tcp_flags 0x2" RD, 11, "needs ip_proto tcp");
	refused(ADD "protocol ip flower ip_proto icmpv6 type 8" RD, 11, "needs ip_proto icmp");
	refused(ADD "protocol ipv6 flower ip_proto icmp code 0" RD, 11, "needs ip_proto icmp");
	refused(ADD "protocol ip flower vlan_id 5" RD, 9, "needs protocol 802.1Q");
	refused(ADD "protocol ipv6 flower src_ip 10.0.0.1" RD, 9, "needs protocol ip");
	refused(ADD "protocol ip flower dst_ip 2001:db8::1" RD, 9, "needs protocol ipv6");
	refused(ADD "flower ip_ttl 2" RD, 7, "needs protocol ip or ipv6");
	refused(ADD "protocol 802.1Q flower ip_proto tcp" RD, 9, "needs protocol ip or ipv6");
	refused(ADD "flower enc_src_ip 198.51.100.1 enc_dst_ip 2001:db8::1" RD, 9,
		"different families");
	/* skip_sw, with the reason */
	refused(ADD "protocol ip flower skip_sw" RD, 9, "never run");
	refused(ADD "protocol ip flower skip_hw skip_hw" RD, 10, "duplicate");
	/* anywhere among the keys, as f_flower.c takes them */
	refused(ADD "protocol ip flower skip_hw ip_proto tcp skip_hw" RD, 12, "duplicate");
	refused(ADD "protocol ip flower ip_proto tcp skip_sw" RD, 11, "never run");
	/* numbers, ranges, values */
	refused(ADD "pref 0 flower" RD, 7, "bad number");
	refused(ADD "pref 65536 flower" RD, 7, "bad number");
	refused(ADD "pref 09 flower" RD, 7, "bad number"); /* tc: octal, 9 is no digit */
	refused(ADD "handle 0 flower" RD, 7, "bad number");
	refused(ADD "protocol ip flower ip_proto tcp dst_port 90-80" RD, 12, "greater than min");
	refused(ADD "protocol ip flower ip_proto tcp dst_port 80-80" RD, 12, "greater than min");
	refused(ADD "protocol ip flower ip_proto tcp dst_port 0" RD, 12, "bad port");
	refused(ADD "protocol ip flower ip_proto tcp dst_port 0-80" RD, 12, "bad port");
	refused(ADD "protocol ip flower ip_proto tcp dst_port 65536" RD, 12, "bad port");
	refused(ADD "protocol ip flower ip_proto tcp tcp_flags 0x1000" RD, 12, "bad value");
	refused(ADD "protocol ip flower ip_flags frag/frag" RD, 10, "at most once");
	refused(ADD "protocol ip flower ip_flags nofrag/firstfrag" RD, 10, "match nothing");
	refused(ADD "protocol ip flower ip_flags frag/" RD, 10, "nothing after");
	refused(ADD "flower enc_key_id 16777216" RD, 8, "bad number");
	refused(ADD "protocol 0x05ff flower" RD, 7, "unknown protocol");
	refused(ADD "protocol ip flower ip_proto tcp ip_proto udp" RD, 11, "duplicate");
	refused(ADD "pref 1 pref 2 flower" RD, 8, "duplicate");
	assert_int_equal(n_bad, 0);
}

static void test_action_and_filter_refusals(void **state)
{
	(void)state;
	/* actions */
	refused(ADD "flower action drop action pass", 9, "unreachable");
	refused(ADD "flower action mirred egress redirect dev a action drop", 13, "unreachable");
	refused(ADD "flower action reclassify", 8, "\"reclassify\" is not supported: it restarts");
	refused(ADD "flower action gact reclassify", 9, "\"reclassify\" is not supported");
	refused(ADD "flower action jump 2 action drop", 8, "\"jump\" is not supported");
	refused(ADD "flower action trap", 8, "no hardware");
	refused(ADD "flower action vlan pop pipe", 10, "write continue or pipe as an action");
	refused(ADD "flower action vlan pop continue", 10, "control word");
	refused(ADD "flower action continue action drop", 9, "unreachable");
	refused(ADD "flower action goto 5", 9, "\"chain\"");
	refused(ADD "flower action vlan push priority 3", 12, "needs \"id\"");
	refused(ADD "flower action vlan push id 4096", 11, "bad number");
	refused(ADD "flower action vlan modify id 1 protocol 802.1Q", 12, "unknown vlan key");
	refused(ADD "flower action tunnel_key set id 1 src_ip 198.51.100.1", 14, "needs \"dst_ip\"");
	refused(ADD "flower action tunnel_key set id 1 id 2", 12, "duplicate");
	refused(ADD "flower action tunnel_key set id 1 src_ip 198.51.100.1 dst_ip 2001:db8::1", 16,
		"different families");
	refused(ADD "flower action tunnel_key set id 1 ttl 3", 12, "unknown tunnel_key");
	refused(ADD "flower action tunnel_key set id 1 csum nocsum", 13, "one at most");
	refused(ADD "flower action tunnel_key", 9, "set or unset");
	/* filter level */
	refused("filter add dev vnet0 root flower action drop", 5, "\"ingress\" or \"egress\"");
	refused("filter add dev vnet0 parent ffff: flower action drop", 5, "ingress");
	refused("filter add vnet0 ingress flower action drop", 3, "dev PORT");
	refused("filter change dev vnet0 ingress", 6, "expected \"flower\"");
	refused("filter frob dev vnet0 ingress", 2, "unknown filter verb");
	refused("filter change dev vnet0 ingress pref 1 protocol ip flower action drop", 2,
		"needs \"pref\" and \"handle\"");
	refused("filter get dev vnet0 ingress pref 1", 2, "needs \"pref\" and \"handle\"");
	refused("filter add dev vnet0 ingress u32 match", 6, "unknown keyword");
	refused("filter add dev vnet0 ingress pref 1", 8, "expected \"flower\"");
	refused("filter del dev vnet0 ingress handle 1", 6, "needs \"pref\"");
	refused("filter del dev vnet0 ingress protocol ip", 6, "cannot flush filters with protocol");
	refused("filter show dev vnet0 ingress pref 1", 6, "not valid for filter show");
	refused("filter", 2, "expected add, change, replace, del, get or show");
	refused("port add x", 1, "expected \"filter\"");
	assert_int_equal(n_bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_keys), cmocka_unit_test(test_l2_keys),
		cmocka_unit_test(test_l3_keys),     cmocka_unit_test(test_l4_keys),
		cmocka_unit_test(test_tunnel_keys), cmocka_unit_test(test_actions),
		cmocka_unit_test(test_del_show),    cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_action_and_filter_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
