/* Golden output of `filter show|get [-s] [-j]`: for one rule per key and
 * action kind, the text and JSON iproute2 6.1's tc prints for the same
 * rule dumped by the kernel, written from tc's printing code
 * (tc/tc_filter.c print_filter, tc/f_flower.c flower_print_opt,
 * tc/m_action.c, m_mirred.c, m_gact.c, m_vlan.c, m_tunnel_key.c,
 * tc/tc_util.c print_tcstats2_attr and print_masked_type), compared
 * exactly, trailing blanks included. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "ctl/ctl_parser.h"
#include "ctl/ctl_print.h"

#define ADD "filter add dev vnet0 ingress pref 1 handle 1 "
#define HEAD "filter protocol ip pref 1 flower chain 0 handle 0x1 "
#define REDIR "\n\taction order 1: mirred (Egress Redirect to device vx0) stolen\n" \
	      "\tindex 1 ref 1 bind 1\n\n"

static void parse(const char *line, struct ctl_flower *f)
{
	char copy[1024];
	char *words[CTL_MAX_WORDS + 8];
	struct ctl_err err;
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS + 8);
	assert_true(n >= 0);
	if (ctl_flower_parse(n, (const char *const *)words, f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
}

/* The rule of `line` printed as one element of a dump. */
static void expect(const char *line, bool json, const struct ctl_flower_stats *st, const char *want)
{
	struct ctl_flower f;
	parse(line, &f);
	struct ctl_print p;
	ctl_print_init(&p, json, 0);
	ctl_print_open_array(&p, NULL);
	assert_int_equal(ctl_flower_print_rule(&p, &f, NULL, st), 0);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	if (strcmp(ctl_print_data(&p), want))
		fail_msg("%s\n got: [%s]\nwant: [%s]", line, ctl_print_data(&p), want);
	ctl_print_release(&p);
}

static void text(const char *keys, const char *want_keys)
{
	char line[512], want[1024];
	snprintf(line, sizeof(line), ADD "%s action mirred egress redirect dev vx0", keys);
	snprintf(want, sizeof(want), "%s\n  not_in_hw" REDIR, want_keys);
	expect(line, false, NULL, want);
}

static void test_keys_text(void **state)
{
	(void)state;
	text("protocol ip flower ip_proto tcp dst_port 80",
	     HEAD "\n  eth_type ipv4\n  ip_proto tcp\n  dst_port 80");
	text("protocol ip flower ip_proto udp src_port 1024-2047 dst_port 512/0xff00",
	     HEAD "\n  eth_type ipv4\n  ip_proto udp\n  dst_port 512/0xff00\n  src_port 1024-2047");
	text("protocol ipv6 flower ip_proto 2f src_ip 2001:db8::/64 dst_ip 2001:db8::1",
	     "filter protocol ipv6 pref 1 flower chain 0 handle 0x1 "
	     "\n  eth_type ipv6\n  ip_proto 2f\n  dst_ip 2001:db8::1\n  src_ip 2001:db8::/64");
	text("protocol ip flower dst_ip 192.0.2.0/255.0.255.0 ip_tos 0x10/fc ip_ttl 64",
	     HEAD "\n  eth_type ipv4\n  ip_tos 16/0xfc\n  ip_ttl 64\n  dst_ip 192.0.2.0/255.0.255.0");
	text("protocol ip flower ip_proto tcp tcp_flags 12",
	     HEAD "\n  eth_type ipv4\n  ip_proto tcp\n  tcp_flags 0x12/fff");
	text("protocol ip flower ip_proto icmp type 8/254 code 0",
	     HEAD "\n  eth_type ipv4\n  ip_proto icmp\n  icmp_type 8/254\n  icmp_code 0");
	text("protocol 802.1Q flower vlan_id 100 vlan_prio 3 vlan_ethtype ip",
	     "filter protocol 802.1Q pref 1 flower chain 0 handle 0x1 "
	     "\n  vlan_id 100\n  vlan_prio 3\n  vlan_ethtype ip\n  eth_type ipv4");
	text("protocol 802.1ad flower vlan_id 5",
	     "filter protocol 802.1ad pref 1 flower chain 0 handle 0x1 \n  vlan_id 5");
	text("protocol all flower dst_mac 02:00:00:00:00:01 src_mac 02:00:00:00:00:00/24",
	     "filter protocol all pref 1 flower chain 0 handle 0x1 "
	     "\n  dst_mac 02:00:00:00:00:01\n  src_mac 02:00:00:00:00:00/24");
	text("protocol arp flower skip_hw",
	     "filter protocol arp pref 1 flower chain 0 handle 0x1 \n  eth_type arp\n  skip_hw");
	text("protocol ip flower ip_flags frag/nofirstfrag",
	     HEAD "\n  eth_type ipv4\n  ip_flags frag/nofirstfrag");
	text("protocol ip flower enc_key_id 42 enc_src_ip 198.51.100.1 enc_dst_ip 198.51.100.0/24 "
	     "enc_dst_port 4789",
	     HEAD "\n  eth_type ipv4\n  enc_dst_ip 198.51.100.0/24\n  enc_src_ip 198.51.100.1"
	     "\n  enc_key_id 42\n  enc_dst_port 4789");
}

static void act(const char *action, const char *want_acts)
{
	char line[512], want[1024];
	snprintf(line, sizeof(line), ADD "chain 3 protocol ip flower %s", action);
	snprintf(want, sizeof(want),
		 "filter protocol ip pref 1 flower chain 3 handle 0x1 \n  eth_type ipv4\n  not_in_hw%s\n",
		 want_acts);
	expect(line, false, NULL, want);
}

static void test_actions_text(void **state)
{
	(void)state;
	act("action drop", "\n\taction order 1: gact action drop\n\t random type none pass val 0"
	    "\n\t index 1 ref 1 bind 1\n");
	act("action pass", "\n\taction order 1: gact action pass\n\t random type none pass val 0"
	    "\n\t index 1 ref 1 bind 1\n");
	act("action goto chain 5", "\n\taction order 1: gact action goto chain 5"
	    "\n\t random type none pass val 0\n\t index 1 ref 1 bind 1\n");
	act("action mirred egress mirror dev vx1 action drop",
	    "\n\taction order 1: mirred (Egress Mirror to device vx1) pipe\n\tindex 1 ref 1 bind 1\n"
	    "\n\taction order 2: gact action drop\n\t random type none pass val 0"
	    "\n\t index 2 ref 1 bind 1\n");
	act("action vlan push id 100 priority 3 protocol 802.1ad action vlan modify id 7 action vlan pop "
	    "action pass",
	    "\n\taction order 1: vlan  push id 100 protocol 802.1ad priority 3 pipe\n\t index 1 ref 1 bind 1\n"
	    "\n\taction order 2: vlan  modify id 7 protocol 802.1Q priority 0 pipe\n\t index 2 ref 1 bind 1\n"
	    "\n\taction order 3: vlan  pop pipe\n\t index 3 ref 1 bind 1\n"
	    "\n\taction order 4: gact action pass\n\t random type none pass val 0"
	    "\n\t index 4 ref 1 bind 1\n");
	act("action tunnel_key set id 42 src_ip 198.51.100.1 dst_ip 198.51.100.2 dst_port 4789 nocsum "
	    "action tunnel_key unset action drop",
	    "\n\taction order 1: tunnel_key  set\n\tsrc_ip 198.51.100.1\n\tdst_ip 198.51.100.2"
	    "\n\tkey_id 42\n\tdst_port 4789\n\tnocsum pipe\n\t index 1 ref 1 bind 1\n"
	    "\n\taction order 2: tunnel_key  unset pipe\n\t index 2 ref 1 bind 1\n"
	    "\n\taction order 3: gact action drop\n\t random type none pass val 0"
	    "\n\t index 3 ref 1 bind 1\n");
	act("action tunnel_key set id 7 src_ip 2001:db8::1 dst_ip 2001:db8::2 action drop",
	    "\n\taction order 1: tunnel_key  set\n\tsrc_ip 2001:db8::1\n\tdst_ip 2001:db8::2"
	    "\n\tkey_id 7\n\tcsum pipe\n\t index 1 ref 1 bind 1\n"
	    "\n\taction order 2: gact action drop\n\t random type none pass val 0"
	    "\n\t index 2 ref 1 bind 1\n");
}

static void test_stats_text(void **state)
{
	(void)state;
	struct ctl_flower_stats st = { .installed_sec = 971, .used_sec = 67, .fast_packets = 5,
				       .fast_bytes = 500, .slow_packets = 1, .slow_bytes = 60 };
	expect(ADD "protocol ip flower action drop", false, &st,
	       HEAD "\n  eth_type ipv4\n  not_in_hw"
	       "\n\taction order 1: gact action drop\n\t random type none pass val 0"
	       "\n\t index 1 ref 1 bind 1 installed 971 sec used 67 sec\n"
	       "\tAction statistics:\n"
	       "\tSent 560 bytes 6 pkt (dropped 6, overlimits 0 requeues 0) \n"
	       "\tSent software 60 bytes 1 pkt\n"
	       "\tSent hardware 500 bytes 5 pkt\n"
	       "\tbacklog 0b 0p requeues 0\n\n");
	/* never used: tc's "used" counts from the install; no fast path: no split */
	st = (struct ctl_flower_stats){ .installed_sec = 9, .used_sec = -1 };
	expect(ADD "protocol ip flower action mirred egress redirect dev vx0", false, &st,
	       HEAD "\n  eth_type ipv4\n  not_in_hw"
	       "\n\taction order 1: mirred (Egress Redirect to device vx0) stolen"
	       "\n\tindex 1 ref 1 bind 1 installed 9 sec used 9 sec\n"
	       "\tAction statistics:\n"
	       "\tSent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"
	       "\tbacklog 0b 0p requeues 0\n\n");
}

static void test_pref_line(void **state)
{
	(void)state;
	struct ctl_flower f;
	parse(ADD "chain 2 protocol ipv6 flower action drop", &f);
	struct ctl_print p;
	ctl_print_init(&p, false, 0);
	ctl_flower_print_pref(&p, &f);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), "filter protocol ipv6 pref 1 flower chain 2 \n");
	ctl_print_release(&p);
	ctl_print_init(&p, true, 0);
	ctl_print_open_array(&p, NULL);
	ctl_flower_print_pref(&p, &f);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p),
			    "[{\"protocol\":\"ipv6\",\"pref\":1,\"kind\":\"flower\",\"chain\":2}]\n");
	ctl_print_release(&p);
}

#define JHEAD "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,\"options\":{\"handle\":1,"
#define JREDIR "\"not_in_hw\":true,\"actions\":[{\"order\":1,\"kind\":\"mirred\"," \
	"\"mirred_action\":\"redirect\",\"direction\":\"egress\",\"to_dev\":\"vx0\"," \
	"\"control_action\":{\"type\":\"stolen\"},\"index\":1,\"ref\":1,\"bind\":1}]}}]\n"

static void json(const char *keys, const char *want_keys)
{
	char line[512], want[2048];
	snprintf(line, sizeof(line), ADD "protocol ip flower %s action mirred egress redirect dev vx0", keys);
	snprintf(want, sizeof(want), JHEAD "\"keys\":{%s}," JREDIR, want_keys);
	expect(line, true, NULL, want);
}

static void test_keys_json(void **state)
{
	(void)state;
	json("ip_proto tcp dst_port 80", "\"eth_type\":\"ipv4\",\"ip_proto\":\"tcp\",\"dst_port\":80");
	json("ip_proto udp src_port 1024-2047 dst_port 512/0xff00",
	     "\"eth_type\":\"ipv4\",\"ip_proto\":\"udp\",\"dst_port\":512,\"dst_port_mask\":\"ff00\","
	     "\"src_port\":{\"start\":1024,\"end\":2047}");
	json("dst_ip 192.0.2.0/24 src_ip 192.0.2.9 ip_tos 0x10/fc ip_ttl 10/10",
	     "\"eth_type\":\"ipv4\",\"ip_tos\":16,\"ip_tos_mask\":\"fc\",\"ip_ttl\":0,\"ip_ttl_mask\":\"10\","
	     "\"dst_ip\":\"192.0.2.0/24\",\"src_ip\":\"192.0.2.9\"");
	json("ip_proto tcp tcp_flags 2/12", "\"eth_type\":\"ipv4\",\"ip_proto\":\"tcp\",\"tcp_flags\":\"0x2/12\"");
	json("ip_proto icmp type 8 code 3/255",
	     "\"eth_type\":\"ipv4\",\"ip_proto\":\"icmp\",\"icmp_type\":\"8\",\"icmp_code\":\"3\"");
	json("dst_mac 02:00:00:00:00:01/ff:00:ff:00:00:00 ip_flags nofrag",
	     "\"dst_mac\":\"02:00:00:00:00:00/ff:00:ff:00:00:00\",\"eth_type\":\"ipv4\","
	     "\"ip_flags\":{\"frag\":false}");
	json("enc_key_id 42 enc_dst_ip 2001:db8::1 enc_dst_port 4789",
	     "\"eth_type\":\"ipv4\",\"enc_dst_ip\":\"2001:db8::1\",\"enc_key_id\":42,\"enc_dst_port\":4789");
}

static void test_actions_json(void **state)
{
	(void)state;
	struct ctl_flower_stats st = { .installed_sec = 971, .used_sec = 67, .fast_packets = 5,
				       .fast_bytes = 500, .slow_packets = 1, .slow_bytes = 60 };
	expect(ADD "protocol ip flower skip_hw action vlan push id 100 action goto chain 5", true, &st,
	       JHEAD "\"keys\":{\"eth_type\":\"ipv4\"},\"skip_hw\":true,\"not_in_hw\":true,\"actions\":["
	       "{\"order\":1,\"kind\":\"vlan\",\"vlan_action\":\"push\",\"id\":100,\"protocol\":\"802.1Q\","
	       "\"priority\":0,\"control_action\":{\"type\":\"pipe\"},\"index\":1,\"ref\":1,\"bind\":1,"
	       "\"installed\":971,\"last_used\":67,\"stats\":{\"bytes\":560,\"packets\":6,\"drops\":0,"
	       "\"overlimits\":0,\"requeues\":0,\"sw_bytes\":60,\"sw_packets\":1,\"hw_bytes\":500,"
	       "\"hw_packets\":5,\"backlog\":0,\"qlen\":0}},"
	       "{\"order\":2,\"kind\":\"gact\",\"control_action\":{\"type\":\"goto\",\"chain\":5},"
	       "\"prob\":{\"random_type\":\"none\",\"control_action\":{\"type\":\"pass\"},\"val\":0},"
	       "\"index\":2,\"ref\":1,\"bind\":1,\"installed\":971,\"last_used\":67,"
	       "\"stats\":{\"bytes\":560,\"packets\":6,\"drops\":0,\"overlimits\":0,\"requeues\":0,"
	       "\"sw_bytes\":60,\"sw_packets\":1,\"hw_bytes\":500,\"hw_packets\":5,\"backlog\":0,\"qlen\":0}}]}}]\n");
	expect(ADD "protocol ip flower action tunnel_key set id 42 src_ip 198.51.100.1 dst_ip 198.51.100.2 "
	       "action mirred egress redirect dev vx0", true, NULL,
	       JHEAD "\"keys\":{\"eth_type\":\"ipv4\"},\"not_in_hw\":true,\"actions\":["
	       "{\"order\":1,\"kind\":\"tunnel_key\",\"mode\":\"set\",\"src_ip\":\"198.51.100.1\","
	       "\"dst_ip\":\"198.51.100.2\",\"key_id\":42,\"flag\":\"csum\","
	       "\"control_action\":{\"type\":\"pipe\"},\"index\":1,\"ref\":1,\"bind\":1},"
	       "{\"order\":2,\"kind\":\"mirred\",\"mirred_action\":\"redirect\",\"direction\":\"egress\","
	       "\"to_dev\":\"vx0\",\"control_action\":{\"type\":\"stolen\"},\"index\":2,\"ref\":1,\"bind\":1}]}}]\n");
}

/* tc -br: fl_terse_dump() sends the handle, the flags and each action's
 * kind and counters; tc runs "kind " and "\tAction statistics:" together. */
static void test_brief(void **state)
{
	(void)state;
	struct ctl_flower f;
	parse(ADD "protocol ip flower skip_hw ip_proto tcp action vlan pop action drop", &f);
	struct ctl_print p;
	ctl_print_init(&p, false, 0);
	ctl_flower_print_brief(&p, &f, NULL);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), HEAD "\n  skip_hw\n  not_in_hw"
			    "\n\taction order 1: vlan \n\taction order 2: gact \n");
	ctl_print_release(&p);
	struct ctl_flower_stats st = { .installed_sec = 3, .used_sec = 1, .slow_packets = 2, .slow_bytes = 200 };
	ctl_print_init(&p, false, 0);
	ctl_flower_print_brief(&p, &f, &st);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), HEAD "\n  skip_hw\n  not_in_hw"
			    "\n\taction order 1: vlan \tAction statistics:\n"
			    "\tSent 200 bytes 2 pkt (dropped 0, overlimits 0 requeues 0) \n"
			    "\tbacklog 0b 0p requeues 0\n"
			    "\n\taction order 2: gact \tAction statistics:\n"
			    "\tSent 200 bytes 2 pkt (dropped 2, overlimits 0 requeues 0) \n"
			    "\tbacklog 0b 0p requeues 0\n\n");
	ctl_print_release(&p);
	ctl_print_init(&p, true, 0);
	ctl_print_open_array(&p, NULL);
	ctl_flower_print_brief(&p, &f, NULL);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), JHEAD "\"keys\":{},\"skip_hw\":true,\"not_in_hw\":true,"
			    "\"actions\":[{\"order\":1,\"kind\":\"vlan\"},{\"order\":2,\"kind\":\"gact\"}]}}]\n");
	ctl_print_release(&p);
	/* the grammar's word: show only, after -s */
	parse("filter show -s -br dev vnet0 ingress", &f);
	assert_true((f.flags & CTL_FF_BRIEF) && (f.flags & CTL_FF_STATS));
	char line[128];
	assert_true(ctl_flower_format(&f, line, sizeof(line)) > 0);
	assert_string_equal(line, "filter show -s -br dev vnet0 ingress");
}

/* tc's get leaves the parent in: "filter ingress protocol ..." */
static void test_get(void **state)
{
	(void)state;
	struct ctl_flower f;
	parse(ADD "protocol ip flower action mirred egress redirect dev vx0", &f);
	f.verb = CTL_FILTER_GET;
	struct ctl_print p;
	ctl_print_init(&p, false, 0);
	assert_int_equal(ctl_flower_print_rule(&p, &f, NULL, NULL), 0);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), "filter ingress protocol ip pref 1 flower chain 0 handle 0x1 "
			    "\n  eth_type ipv4\n  not_in_hw" REDIR);
	ctl_print_release(&p);
	ctl_print_init(&p, true, 0);
	assert_int_equal(ctl_flower_print_rule(&p, &f, NULL, NULL), 0);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), "{\"ingress\":true,\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\","
			    "\"chain\":0,\"options\":{\"handle\":1,\"keys\":{\"eth_type\":\"ipv4\"},"
			    "\"not_in_hw\":true,\"actions\":[{\"order\":1,\"kind\":\"mirred\","
			    "\"mirred_action\":\"redirect\",\"direction\":\"egress\",\"to_dev\":\"vx0\","
			    "\"control_action\":{\"type\":\"stolen\"},\"index\":1,\"ref\":1,\"bind\":1}]}}\n");
	ctl_print_release(&p);
	/* tc's `show ... chain N` leaves the chain out of each line */
	parse("filter show dev vnet0 ingress chain 3", &f);
	struct ctl_flower rule;
	parse(ADD "chain 3 protocol ip flower action mirred egress redirect dev vx0", &rule);
	rule.verb = f.verb;
	ctl_print_init(&p, false, 0);
	ctl_flower_print_pref(&p, &rule);
	assert_int_equal(ctl_flower_print_rule(&p, &rule, NULL, NULL), 0);
	assert_int_equal(ctl_print_finish(&p), 0);
	assert_string_equal(ctl_print_data(&p), "filter protocol ip pref 1 flower \n"
			    "filter protocol ip pref 1 flower handle 0x1 \n  eth_type ipv4\n  not_in_hw" REDIR);
	ctl_print_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_text),
		cmocka_unit_test(test_actions_text),
		cmocka_unit_test(test_stats_text),
		cmocka_unit_test(test_pref_line),
		cmocka_unit_test(test_keys_json),
		cmocka_unit_test(test_actions_json),
		cmocka_unit_test(test_brief),
		cmocka_unit_test(test_get),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
