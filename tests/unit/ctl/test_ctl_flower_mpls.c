/* Unit tests for the MPLS and ARP keys, `action continue`/`pipe` and the
 * refusal of tc's other flower keys in the filter grammar
 * (src/ctl/ctl_flower_mpls.c, ctl_flower_match.c, ctl_flower_action.c):
 * how tc 6.1's f_flower.c reads each (flower_parse_mpls_lse(), the
 * mpls_* branches, flower_parse_arp_*()), the canonical line `show config`
 * prints, and the golden `filter show` text and JSON written from
 * f_flower.c's flower_print_mpls_opts(), flower_print_u32/u8(),
 * flower_print_ip4_addr(), flower_print_arp_op(), m_gact.c and the
 * kernel's fl_dump_key_mpls() (which sends a first-entry-only match in
 * the older attributes, whatever form was typed). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_flower.h"
#include "ctl/ctl_print.h"

#define ADD "filter add dev vnet0 ingress "
#define RD " action drop"
#define UC ADD "protocol mpls_uc flower "
#define ARP ADD "protocol arp flower "

static int parse_line(const char *line, struct ctl_flower *f, struct ctl_err *err)
{
	char copy[1024];
	char *words[CTL_MAX_WORDS];
	snprintf(copy, sizeof(copy), "%s", line);
	int n = ctl_split_words(copy, words, CTL_MAX_WORDS);
	assert_true(n > 0);
	return ctl_flower_parse(n, (const char *const *)words, f, err);
}

/* line parses, prints as canonical, and the canonical line parses back to
 * the same struct. */
static void same_as(const char *line, const char *canonical)
{
	struct ctl_flower f, g;
	struct ctl_err err;
	char text[1024];
	if (parse_line(line, &f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
	assert_true(ctl_flower_format(&f, text, sizeof(text)) > 0);
	if (strcmp(text, canonical))
		fail_msg("\"%s\"\n  printed \"%s\"\n  want    \"%s\"", line, text, canonical);
	if (parse_line(text, &g, &err))
		fail_msg("canonical \"%s\" refused: %s", text, err.msg);
	assert_true(ctl_flower_equal(&f, &g));
}

static void refused(const char *line, const char *needle)
{
	struct ctl_flower f;
	struct ctl_err err;
	assert_int_equal(parse_line(line, &f, &err), -EINVAL);
	if (!strstr(err.msg, needle))
		fail_msg("\"%s\": \"%s\" lacks \"%s\"", line, err.msg, needle);
}

static void test_mpls_grammar(void **state)
{
	(void)state;
	same_as(UC "mpls_label 100 mpls_tc 3 mpls_bos 1 mpls_ttl 64" RD,
		UC "mpls_label 100 mpls_tc 3 mpls_bos 1 mpls_ttl 64" RD);
	same_as(ADD "protocol mpls_mc flower mpls_label 1048575" RD,
		ADD "protocol mpls_mc flower mpls_label 1048575" RD);
	same_as(ADD "protocol 0x8847 flower mpls_ttl 0" RD, UC "mpls_ttl 0" RD);
	/* lse: fields in any order, depths printed in order */
	same_as(UC "mpls lse depth 3 ttl 9 label 5 lse depth 1 bos 0" RD, /* two depths: kept */
		UC "mpls lse depth 1 bos 0 lse depth 3 label 5 ttl 9" RD);
	same_as(UC "mpls lse depth 7" RD, UC "mpls lse depth 7" RD);
	/* the first entry alone, with a field: the older form, as the kernel
	 * stores and dumps it (so the two spellings are one key) */
	same_as(UC "mpls lse depth 1 ttl 9 label 5" RD, UC "mpls_label 5 mpls_ttl 9" RD);
	same_as(UC "mpls lse depth 1 bos 1 tc 2" RD, UC "mpls_tc 2 mpls_bos 1" RD);
	same_as(UC "mpls lse depth 1" RD, UC "mpls lse depth 1" RD); /* no field: no older form */
	/* under a VLAN, vlan_ethtype is the ethertype (tc's eth_type) */
	same_as(ADD "protocol 802.1Q flower vlan_ethtype mpls_uc mpls_label 16" RD,
		ADD "protocol 802.1Q flower vlan_ethtype mpls_uc mpls_label 16" RD);
	/* numbers: get_u32/get_u8(.., 10), within the field */
	refused(UC "mpls_label 1048576" RD, "mpls_label");
	refused(UC "mpls_label 0x10" RD, "mpls_label");
	refused(UC "mpls_tc 8" RD, "mpls_tc");
	refused(UC "mpls_bos 2" RD, "mpls_bos");
	refused(UC "mpls_ttl 256" RD, "mpls_ttl");
	refused(UC "mpls lse depth 0 label 1" RD, "depth");
	refused(UC "mpls lse depth 8 label 1" RD, "depth");
	refused(UC "mpls lse label 1" RD, "needs \"depth");
	refused(UC "mpls lse depth 1 tc 9" RD, "tc");
	refused(UC "mpls lse depth 1 label 1 label 2" RD, "duplicate \"label\"");
	refused(UC "mpls lse depth 2 lse depth 2 ttl 1" RD, "duplicated MPLS LSE");
	refused(UC "mpls" RD, "at least one");
	/* tc's rules: an MPLS protocol, one form per line */
	refused(ADD "protocol ip flower mpls_label 1" RD, "ethertype isn't MPLS");
	refused(ADD "protocol ip flower mpls lse depth 1" RD, "ethertype isn't MPLS");
	refused(ADD "protocol 802.1Q flower vlan_ethtype ip mpls_tc 1" RD, "mpls_uc or mpls_mc");
	refused(UC "mpls_label 1 mpls lse depth 2 label 3" RD, "one form per line");
	refused(UC "mpls lse depth 2 label 3 mpls_ttl 1" RD, "one form per line");
	refused(UC "mpls_label 1 mpls_label 2" RD, "duplicate");
}

static void test_arp_grammar(void **state)
{
	(void)state;
	same_as(ARP "arp_sip 192.0.2.1 arp_tip 192.0.2.0/24 arp_op request" RD,
		ARP "arp_sip 192.0.2.1 arp_tip 192.0.2.0/24 arp_op request" RD);
	same_as(ARP "arp_op 2" RD, ARP "arp_op reply" RD);
	same_as(ARP "arp_op 0" RD, ARP "arp_op 0" RD);
	same_as(ARP "arp_op 1/1" RD, ARP "arp_op 1/1" RD);
	same_as(ARP "arp_sha 02:00:00:00:00:01 arp_tha 02:00:00:00:00:ff/40" RD,
		ARP "arp_sha 02:00:00:00:00:01 arp_tha 02:00:00:00:00:00/40" RD);
	same_as(ADD "protocol rarp flower arp_op request" RD, ADD "protocol rarp flower arp_op request" RD);
	/* tc: op 0, 1 or 2 (flow_arp_op_validate()), decimal */
	refused(ARP "arp_op 3" RD, "arp_op");
	refused(ARP "arp_op 0x1" RD, "arp_op");
	refused(ARP "arp_op request/0x1" RD, "mask");
	refused(ARP "arp_sip 2001:db8::1" RD, "IPv4");
	refused(ADD "protocol ip flower arp_tip 192.0.2.1" RD, "protocol arp or rarp");
}

/* flower_parse_ip_tos_ttl(): value get_u8(.., 10) else (.., 16), mask
 * get_u8(.., 16); printed as ip_tos (hex) and ip_ttl (decimal). */
static void test_enc_tos_ttl_grammar(void **state)
{
	(void)state;
	same_as(ADD "protocol ip flower enc_tos 40 enc_ttl 17" RD,
		ADD "protocol ip flower enc_tos 0x28 enc_ttl 17" RD);
	same_as(ADD "protocol ip flower enc_tos 1f/fc enc_ttl 64/f0" RD,
		ADD "protocol ip flower enc_tos 0x1c/0xfc enc_ttl 64/0xf0" RD);
	same_as(ADD "protocol all flower enc_key_id 5 enc_ttl 0x40" RD,
		ADD "protocol all flower enc_key_id 5 enc_ttl 64" RD);
	refused(ADD "protocol ip flower enc_tos 256" RD, "enc_tos");
	refused(ADD "protocol ip flower enc_ttl 1/0x100" RD, "enc_ttl");
}

static void test_continue_grammar(void **state)
{
	(void)state;
	same_as(ADD "protocol ip flower action continue", ADD "protocol ip flower action continue");
	same_as(ADD "protocol ip flower action gact continue", ADD "protocol ip flower action continue");
	same_as(ADD "protocol ip flower action gact pipe action mirred egress mirror dev vx0 action continue",
		ADD "protocol ip flower action pipe action mirred egress mirror dev vx0 action continue");
	refused(ADD "protocol ip flower action continue action drop", "unreachable");
	refused(ADD "protocol ip flower action mirred egress mirror dev vx0 continue", "action continue");
}

/* Keys tc-flower(8) has that vxswitch does not build: named, with why. */
static void test_unsupported_keys(void **state)
{
	(void)state;
	refused(ADD "protocol ip flower ct_state +trk" RD, "no connection tracking");
	refused(ADD "protocol ip flower vxlan_opts 10" RD, "VXLAN-GBP");
	refused(ADD "protocol ip flower geneve_opts 0102:80:00880022" RD, "Geneve");
	refused(ADD "protocol 802.1ad flower cvlan_id 5" RD, "inner tag");
	refused(ADD "protocol 802.1Q flower num_of_vlans 2" RD, "not built");
	refused(ADD "protocol 0x8864 flower pppoe_sid 1" RD, "PPPoE");
	refused(ADD "protocol 0x8864 flower ppp_proto ip" RD, "PPPoE");
	refused(ADD "protocol ip flower l2tpv3_sid 1" RD, "L2TPv3");
	refused(ADD "protocol all flower cfm mel 1" RD, "CFM");
	refused(ADD "protocol all flower l2_miss 1" RD, "FDB lookup");
	refused(ADD "protocol ip flower classid 1:1" RD, "qdisc classes");
	refused(ADD "protocol ip flower frobnicate 1" RD, "unknown flower key");
}

/* ---- golden show text and JSON --------------------------------------------- */

#define ONE "filter add dev vnet0 ingress pref 1 handle 1 "
#define REDIR " action mirred egress redirect dev vx0"
#define REDIR_TEXT "\n  not_in_hw\n\taction order 1: mirred (Egress Redirect to device vx0) stolen\n" \
		   "\tindex 1 ref 1 bind 1\n\n"
#define JREDIR "\"not_in_hw\":true,\"actions\":[{\"order\":1,\"kind\":\"mirred\"," \
	"\"mirred_action\":\"redirect\",\"direction\":\"egress\",\"to_dev\":\"vx0\"," \
	"\"control_action\":{\"type\":\"stolen\"},\"index\":1,\"ref\":1,\"bind\":1}]}}]\n"

static void expect(const char *line, bool json, const char *want)
{
	struct ctl_flower f;
	struct ctl_err err;
	if (parse_line(line, &f, &err))
		fail_msg("\"%s\" refused: %s", line, err.msg);
	struct ctl_print p;
	ctl_print_init(&p, json, 0);
	ctl_print_open_array(&p, NULL);
	assert_int_equal(ctl_flower_print_rule(&p, &f, NULL, NULL), 0);
	ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	if (strcmp(ctl_print_data(&p), want))
		fail_msg("%s\n got: [%s]\nwant: [%s]", line, ctl_print_data(&p), want);
	ctl_print_release(&p);
}

static void test_show_text(void **state)
{
	(void)state;
	const char *uc = "filter protocol mpls_uc pref 1 flower chain 0 handle 0x1 \n  eth_type 8847";
	char want[1024];
	snprintf(want, sizeof(want), "%s\n  mpls_label 100\n  mpls_tc 3\n  mpls_bos 1\n  mpls_ttl 64"
		 REDIR_TEXT, uc);
	expect(ONE "protocol mpls_uc flower mpls_ttl 64 mpls_bos 1 mpls_tc 3 mpls_label 100" REDIR,
	       false, want);
	/* depth 1 only, with a field: the kernel dumps the older attributes */
	snprintf(want, sizeof(want), "%s\n  mpls_label 100\n  mpls_ttl 9" REDIR_TEXT, uc);
	expect(ONE "protocol mpls_uc flower mpls lse depth 1 label 100 ttl 9" REDIR, false, want);
	snprintf(want, sizeof(want), "%s\n  mpls\n    lse depth 1 label 100\n    lse depth 2 tc 5 bos 1 ttl 63"
		 REDIR_TEXT, uc);
	expect(ONE "protocol mpls_uc flower mpls lse depth 2 bos 1 ttl 63 tc 5 lse depth 1 label 100" REDIR,
	       false, want);
	snprintf(want, sizeof(want), "%s\n  mpls\n    lse depth 1" REDIR_TEXT, uc);
	expect(ONE "protocol mpls_uc flower mpls lse depth 1" REDIR, false, want);
	expect(ONE "protocol arp flower arp_sip 192.0.2.1 arp_tip 192.0.2.0/24 arp_op reply "
	       "arp_sha 02:00:00:00:00:01 arp_tha 02:00:00:00:00:00/40" REDIR, false,
	       "filter protocol arp pref 1 flower chain 0 handle 0x1 \n  eth_type arp"
	       "\n  arp_sip 192.0.2.1\n  arp_tip 192.0.2.0/24\n  arp_op reply"
	       "\n  arp_sha 02:00:00:00:00:01\n  arp_tha 02:00:00:00:00:00/40" REDIR_TEXT);
	expect(ONE "protocol ip flower enc_key_id 42 enc_tos 0x28/fc enc_ttl 17" REDIR, false,
	       "filter protocol ip pref 1 flower chain 0 handle 0x1 \n  eth_type ipv4\n  enc_key_id 42"
	       "\n  enc_tos 40/0xfc\n  enc_ttl 17" REDIR_TEXT);
	expect(ONE "protocol arp flower arp_op 1/1" REDIR, false,
	       "filter protocol arp pref 1 flower chain 0 handle 0x1 \n  eth_type arp\n  arp_op 1/1"
	       REDIR_TEXT);
	expect(ONE "protocol ip flower action mirred egress mirror dev vx0 action pipe action continue", false,
	       "filter protocol ip pref 1 flower chain 0 handle 0x1 \n  eth_type ipv4\n  not_in_hw"
	       "\n\taction order 1: mirred (Egress Mirror to device vx0) pipe\n\tindex 1 ref 1 bind 1\n"
	       "\n\taction order 2: gact action pipe\n\t random type none pass val 0"
	       "\n\t index 2 ref 1 bind 1\n"
	       "\n\taction order 3: gact action continue\n\t random type none pass val 0"
	       "\n\t index 3 ref 1 bind 1\n\n");
}

static void test_show_json(void **state)
{
	(void)state;
	const char *jhead = "[{\"protocol\":\"mpls_uc\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,"
			    "\"options\":{\"handle\":1,\"keys\":{\"eth_type\":\"8847\",";
	char want[2048];
	snprintf(want, sizeof(want), "%s\"mpls_label\":100,\"mpls_tc\":\"3\",\"mpls_bos\":\"1\","
		 "\"mpls_ttl\":\"64\"}," JREDIR, jhead);
	expect(ONE "protocol mpls_uc flower mpls_label 100 mpls_tc 3 mpls_bos 1 mpls_ttl 64" REDIR, true,
	       want);
	snprintf(want, sizeof(want), "%s\"mpls\":[{\"depth\":1,\"label\":100},{\"depth\":3,\"tc\":5,"
		 "\"bos\":1,\"ttl\":63}]}," JREDIR, jhead);
	expect(ONE "protocol mpls_uc flower mpls lse depth 1 label 100 lse depth 3 tc 5 bos 1 ttl 63" REDIR,
	       true, want);
	expect(ONE "protocol arp flower arp_tip 192.0.2.10 arp_op request arp_sha 02:00:00:00:00:01/24" REDIR,
	       true,
	       "[{\"protocol\":\"arp\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,\"options\":{\"handle\":1,"
	       "\"keys\":{\"eth_type\":\"arp\",\"arp_tip\":\"192.0.2.10\",\"arp_op\":\"request\","
	       "\"arp_sha\":\"02:00:00:00:00:00/24\"}," JREDIR);
	expect(ONE "protocol ip flower enc_tos 0x28/fc enc_ttl 17" REDIR, true,
	       "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,\"options\":{\"handle\":1,"
	       "\"keys\":{\"eth_type\":\"ipv4\",\"enc_tos\":40,\"enc_tos_mask\":\"fc\",\"enc_ttl\":17}," JREDIR);
	expect(ONE "protocol ip flower action continue", true,
	       "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,\"options\":{\"handle\":1,"
	       "\"keys\":{\"eth_type\":\"ipv4\"},\"not_in_hw\":true,\"actions\":[{\"order\":1,"
	       "\"kind\":\"gact\",\"control_action\":{\"type\":\"continue\"},\"prob\":{\"random_type\":"
	       "\"none\",\"control_action\":{\"type\":\"pass\"},\"val\":0},\"index\":1,\"ref\":1,"
	       "\"bind\":1}]}}]\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mpls_grammar),    cmocka_unit_test(test_arp_grammar),
		cmocka_unit_test(test_continue_grammar), cmocka_unit_test(test_unsupported_keys),
		cmocka_unit_test(test_enc_tos_ttl_grammar),
		cmocka_unit_test(test_show_text),       cmocka_unit_test(test_show_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
