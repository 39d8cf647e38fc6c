/* Unit tests for tc's own readings in the filter grammar (src/ctl/ctl_flower*.c),
 * each taken from iproute2 6.1 (lib/ll_proto.c, lib/utils.c, tc/f_flower.c):
 * a line tc accepts parses to the same rule vxswitch matches, and prints
 * back in the canonical form. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"

#define ADD "filter add dev vnet0 ingress "
#define RD " action drop"

static int parse_line(const char *line, struct ctl_flower *f, struct ctl_err *err)
{
	char copy[1024];
	char *words[CTL_MAX_WORDS];
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS);
	assert_true(n > 0);
	return ctl_flower_parse(n, (const char *const *)words, f, err);
}

/* line parses and prints as canonical. */
static void same_as(const char *line, const char *canonical)
{
	struct ctl_flower f;
	struct ctl_err err;
	char text[1024];
	if (parse_line(line, &f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
	assert_true(ctl_flower_format(&f, text, sizeof(text)) > 0);
	if (strcmp(text, canonical))
		fail_msg("\"%s\"\n  printed \"%s\"\n  want    \"%s\"", line, text, canonical);
}

static void refused(const char *line, const char *needle)
{
	struct ctl_flower f;
	struct ctl_err err;
	assert_int_equal(parse_line(line, &f, &err), -EINVAL);
	if (!strstr(err.msg, needle))
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", line, err.msg, needle);
}

/* ll_proto_a2n(): the names of ll_proto.c, case-insensitive, with "ipv4"
 * an alias of ETH_P_IP; else get_be16(.., 0), so decimal too. */
static void test_protocol(void **state)
{
	(void)state;
	same_as(ADD "protocol ipv4 flower" RD, ADD "protocol ip flower" RD);
	same_as(ADD "protocol IPv4 flower ip_proto tcp" RD, ADD "protocol ip flower ip_proto tcp" RD);
	same_as(ADD "protocol 2048 flower" RD, ADD "protocol ip flower" RD);
	same_as(ADD "protocol 34525 flower" RD, ADD "protocol ipv6 flower" RD);
	same_as(ADD "protocol 0x86DD flower" RD, ADD "protocol ipv6 flower" RD);
	same_as(ADD "protocol 802.1q flower vlan_ethtype ipv4" RD,
		ADD "protocol 802.1Q flower vlan_ethtype ip" RD);
	same_as(ADD "protocol 802.1Q flower" " action vlan push id 5 protocol 33024",
		ADD "protocol 802.1Q flower action vlan push id 5 protocol 802.1Q");
	/* Below 0x0600 is an 802.3 length, not a type: refused, not matched. */
	refused(ADD "protocol 1535 flower" RD, "unknown protocol");
	refused(ADD "protocol ipv5 flower" RD, "ipv4");
}

#define IP ADD "protocol ip flower "
#define TCP IP "ip_proto tcp "

/* One line per key of docs/FLOWER.md: what tc's reader takes, what it
 * refuses. */
static void test_match_numbers(void **state)
{
	(void)state;
	/* ip_proto: names by any prefix (matches()), numbers get_u8(.., 16) */
	same_as(IP "ip_proto t" RD, IP "ip_proto tcp" RD);
	same_as(IP "ip_proto ud" RD, IP "ip_proto udp" RD);
	same_as(IP "ip_proto 11" RD, IP "ip_proto udp" RD);   /* 0x11 = 17, as tc */
	same_as(IP "ip_proto 0x11" RD, IP "ip_proto udp" RD);
	same_as(IP "ip_proto 6" RD, IP "ip_proto tcp" RD);
	same_as(IP "ip_proto 2f" RD, IP "ip_proto 0x2f" RD);
	refused(IP "ip_proto 100" RD, "0..ff (hex");               /* 0x100 > 0xff */
	/* ip_tos / ip_ttl: value get_u8(.., 10) else (.., 16); mask (.., 16) */
	same_as(IP "ip_tos 16" RD, IP "ip_tos 0x10" RD);
	same_as(IP "ip_tos 1f" RD, IP "ip_tos 0x1f" RD);
	same_as(IP "ip_tos 0x10/fc" RD, IP "ip_tos 0x10/0xfc" RD);
	same_as(IP "ip_ttl 64/ff" RD, IP "ip_ttl 64" RD);
	same_as(IP "ip_ttl 10/10" RD, IP "ip_ttl 0/0x10" RD);    /* 10 & 0x10 */
	refused(IP "ip_ttl 1/255" RD, "bad value");               /* 0x255 > 0xff */
	/* tcp_flags: value and mask get_u16(.., 16), at most 0xfff */
	same_as(TCP "tcp_flags 12/12" RD, TCP "tcp_flags 0x12/0x12" RD);
	same_as(TCP "tcp_flags 2" RD, TCP "tcp_flags 0x2/0xfff" RD);
	refused(TCP "tcp_flags 1000" RD, "bad value");
	/* ports: get_be16(.., 10), decimal only */
	same_as(TCP "dst_port 80 src_port 1024-2047" RD, TCP "src_port 1024-2047 dst_port 80" RD);
	refused(TCP "dst_port 0x50" RD, "bad port");
	/* VALUE/MASK: get_u16(.., 0) both, any value (f_flower.c's
	 * flower_parse_u16()); the value is masked */
	same_as(TCP "dst_port 512/0xff00" RD, TCP "dst_port 512/0xff00" RD);
	same_as(TCP "dst_port 0x2ff/65280" RD, TCP "dst_port 512/0xff00" RD);
	same_as(TCP "src_port 0/0" RD, TCP "src_port 0/0x0000" RD);
	refused(TCP "dst_port 512/0x10000" RD, "VALUE/MASK");
	/* type / code VALUE[/MASK]: get_u8(.., 10) both (flower_parse_u8()) */
	same_as(IP "ip_proto icmp type 9/254 code 3/255" RD, IP "ip_proto icmp type 8/254 code 3" RD);
	refused(IP "ip_proto icmp type 8/0xfe" RD, "bad value");
	/* type / code: get_u8(.., 10) */
	same_as(IP "ip_proto icmp type 8 code 0" RD, IP "ip_proto icmp type 8 code 0" RD);
	refused(IP "ip_proto icmp type 0x8" RD, "decimal");
	/* vlan_id get_u16(.., 10), vlan_prio get_u8(.., 10) */
	same_as(ADD "protocol 802.1Q flower vlan_id 100 vlan_prio 3" RD,
		ADD "protocol 802.1Q flower vlan_id 100 vlan_prio 3" RD);
	refused(ADD "protocol 802.1Q flower vlan_id 0x64" RD, "decimal");
	/* enc_key_id get_be32(.., 10), enc_dst_port get_be16(.., 10) */
	same_as(ADD "flower enc_key_id 42 enc_dst_port 4789" RD, ADD "flower enc_key_id 42 enc_dst_port 4789" RD);
	refused(ADD "flower enc_key_id 0x2a" RD, "decimal");
	refused(ADD "flower enc_dst_port 0x12b5" RD, "decimal");
	/* MAC /LEN get_unsigned(.., 10); address /LEN get_netmask(.., 0) */
	same_as(ADD "flower dst_mac 02:00:00:00:00:01/24" RD, ADD "flower dst_mac 02:00:00:00:00:00/24" RD);
	same_as(IP "dst_ip 192.0.2.1/0x18" RD, IP "dst_ip 192.0.2.0/24" RD);
	same_as(IP "dst_ip 192.0.2.1/030" RD, IP "dst_ip 192.0.2.0/24" RD);
}

/* pref (tc_filter.c), handle (f_flower.c) and chain: get_u32(.., 0) */
static void test_filter_numbers(void **state)
{
	(void)state;
	same_as(ADD "pref 0x10 handle 010 chain 0x1 flower" RD, ADD "pref 16 handle 8 chain 1 flower" RD);
	same_as(ADD "pref 010 flower" RD, ADD "pref 8 flower" RD);
	refused(ADD "pref 08 flower" RD, "bad number");
}

/* Actions: goto chain get_u32(.., 10) (tc_util.c); tunnel_key id
 * get_be32(.., 10), dst_port get_be16(.., 10) (m_tunnel_key.c); vlan id
 * get_u16(.., 0), priority get_u8(.., 0) (m_vlan.c). */
static void test_action_numbers(void **state)
{
	(void)state;
	same_as(ADD "flower action goto chain 12", ADD "flower action goto chain 12");
	refused(ADD "flower action goto chain 0xc", "decimal");
	same_as(ADD "flower action tunnel_key set id 42 src_ip 198.51.100.1 dst_ip 198.51.100.2 dst_port 4789",
		ADD "flower action tunnel_key set id 42 src_ip 198.51.100.1 dst_ip 198.51.100.2 dst_port 4789");
	refused(ADD "flower action tunnel_key set id 0x2a src_ip 198.51.100.1 dst_ip 198.51.100.2", "decimal");
	same_as(ADD "protocol 802.1Q flower action vlan modify id 0x10 priority 07",
		ADD "protocol 802.1Q flower action vlan modify id 16 priority 7");
}

/* tc's verbs (do_filter(), by any prefix) and del/get selectors. */
static void test_verbs(void **state)
{
	(void)state;
	same_as("filter r dev vnet0 ingress pref 1 handle 2 protocol ip flower ip_proto tcp" RD,
		"filter replace dev vnet0 ingress pref 1 handle 2 protocol ip flower ip_proto tcp" RD);
	same_as("filter replace dev vnet0 ingress protocol ip flower" RD,
		"filter replace dev vnet0 ingress protocol ip flower" RD);
	same_as("filter c dev vnet0 ingress pref 1 handle 2 protocol ip flower" RD,
		"filter change dev vnet0 ingress pref 1 handle 2 protocol ip flower" RD);
	same_as("filter d dev vnet0 ingress protocol ip pref 1 handle 101 flower",
		"filter del dev vnet0 ingress pref 1 handle 101 protocol ip");
	same_as("filter delete dev vnet0 ingress pref 1 protocol 802.1Q chain 3",
		"filter del dev vnet0 ingress pref 1 chain 3 protocol 802.1Q");
	same_as("filter g dev vnet0 ingress protocol ip pref 1 handle 0x1 flower",
		"filter get dev vnet0 ingress pref 1 handle 1 protocol ip");
	same_as("filter lst dev vnet0 ingress", "filter show dev vnet0 ingress");
	same_as("filter get -s dev vnet0 ingress pref 1 handle 1",
		"filter get -s dev vnet0 ingress pref 1 handle 1");
	same_as("filter s dev vnet0 ingress chain 2", "filter show dev vnet0 ingress chain 2");
	refused("filter get dev vnet0 ingress pref 1 flower", "needs \"pref\" and \"handle\"");
	refused("filter del dev vnet0 ingress handle 1", "needs \"pref\"");
	refused("filter show dev vnet0 ingress protocol ip", "unknown keyword");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_match_numbers),
		cmocka_unit_test(test_filter_numbers),
		cmocka_unit_test(test_action_numbers),
		cmocka_unit_test(test_verbs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
