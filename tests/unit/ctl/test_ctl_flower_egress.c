/* Unit tests for egress rules and indev in the filter grammar
 * (src/ctl/ctl_flower_egress.c): `egress` where `ingress` goes, for every
 * verb; `indev NAME` anywhere among the keys, printed back first; the
 * refusals; and the golden text and JSON iproute2 6.1's tc prints for an
 * egress rule with indev, written from tc's printing code:
 *   tc/tc_filter.c print_filter(): `show dev D egress` sets filter_parent
 *     to ffff:fff3, the kernel dumps the parent the rule was added under
 *     (block->classid, ffff:fff3): equal, so no parent word; `get` leaves
 *     filter_parent 0, so it prints "egress " ("egress": true in JSON);
 *   tc/f_flower.c flower_print_opt(): "handle 0x1 ", then TCA_FLOWER_INDEV
 *     as print_nl() + "  indev %s" ("indev" in "options", before "keys"),
 *     then the keys. */
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

static void check_canonical(const char *line, const char *canonical)
{
	struct ctl_flower f, again;
	char text[1024];
	parse_ok(line, &f);
	assert_true(ctl_flower_format(&f, text, sizeof(text)) > 0);
	if (strcmp(text, canonical))
		fail_msg("\"%s\"\n  printed \"%s\"\n expected \"%s\"", line, text, canonical);
	parse_ok(text, &again);
	assert_true(ctl_flower_equal(&f, &again));
}

/* Refused, naming word `word` (1-based, as ctl_err.word) and saying `what`. */
static void refused(const char *line, int word, const char *what)
{
	struct ctl_flower f;
	struct ctl_err err;
	if (!parse_line(line, &f, &err))
		fail_msg("\"%s\" accepted", line);
	if (err.word != word || !strstr(err.msg, what))
		fail_msg("\"%s\": word %d \"%s\", expected word %d with \"%s\"", line, err.word, err.msg,
			 word, what);
}

#define EADD "filter add dev vnet0 egress "

static void test_egress_verbs(void **state)
{
	(void)state;
	struct ctl_flower f;
	parse_ok(EADD "protocol ip flower action drop", &f);
	assert_true(f.rule.given & FLOWER_SF_EGRESS);
	parse_ok("filter add dev vnet0 ingress protocol ip flower action drop", &f);
	assert_false(f.rule.given & FLOWER_SF_EGRESS);
	check_canonical(EADD "pref 1 handle 1 protocol ip flower skip_hw ip_proto tcp dst_port 80 "
			"action mirred egress mirror dev vx0 action pass",
			EADD "pref 1 handle 1 protocol ip flower skip_hw ip_proto tcp dst_port 80 "
			"action mirred egress mirror dev vx0 action pass");
	/* keys before the hook, as operators' notes write them */
	check_canonical("filter add dev vnet0 pref 2 egress protocol ip flower action drop",
			EADD "pref 2 protocol ip flower action drop");
	check_canonical("filter replace dev vnet0 egress pref 2 handle 1 protocol ip flower action pass",
			"filter replace dev vnet0 egress pref 2 handle 1 protocol ip flower action pass");
	check_canonical("filter del dev vnet0 egress pref 2", "filter del dev vnet0 egress pref 2");
	check_canonical("filter del dev vnet0 egress", "filter del dev vnet0 egress");
	check_canonical("filter show dev vnet0 egress", "filter show dev vnet0 egress");
	check_canonical("filter show -s -br dev vnet0 egress chain 1",
			"filter show -s -br dev vnet0 egress chain 1");
	check_canonical("filter get dev vnet0 egress pref 2 handle 1 protocol ip flower",
			"filter get dev vnet0 egress pref 2 handle 1 protocol ip");
	check_canonical(EADD "flower action vlan push id 5 action tunnel_key set id 7 src_ip 198.51.100.1 "
			"dst_ip 198.51.100.3",
			EADD "flower action vlan push id 5 action tunnel_key set id 7 src_ip 198.51.100.1 "
			"dst_ip 198.51.100.3");
	/* the same line at the other hook is another rule */
	struct ctl_flower in, out;
	parse_ok("filter add dev vnet0 ingress pref 1 flower action drop", &in);
	parse_ok("filter add dev vnet0 egress pref 1 flower action drop", &out);
	assert_false(ctl_flower_equal(&in, &out));
}

static void test_indev(void **state)
{
	(void)state;
	struct ctl_flower f;
	parse_ok(EADD "protocol ip flower ip_proto icmp indev vx0 action drop", &f);
	assert_true(f.rule.match.given & FLOWER_FM_INDEV);
	assert_string_equal(f.rule.match.indev, "vx0");
	/* anywhere among the keys; printed first (after skip_hw) */
	check_canonical(EADD "protocol ip flower ip_proto icmp indev vx0 action drop",
			EADD "protocol ip flower indev vx0 ip_proto icmp action drop");
	check_canonical("filter add dev vnet0 ingress flower skip_hw indev vnet0 action drop",
			"filter add dev vnet0 ingress flower skip_hw indev vnet0 action drop");
	/* indev is part of the match: another indev is another rule */
	struct ctl_flower g;
	parse_ok(EADD "protocol ip flower indev tap1 ip_proto icmp action drop", &g);
	assert_false(ctl_flower_equal(&f, &g));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("filter add dev vnet0 root flower action drop", 5, "\"ingress\" or \"egress\"");
	refused("filter add dev vnet0 parent ffff:fff3 flower action drop", 5, "\"ingress\" or \"egress\"");
	refused("filter add dev vnet0 egress ingress flower action drop", 6, "unknown keyword");
	refused("filter show dev vnet0", 5, "\"ingress\" or \"egress\"");
	refused(EADD "flower indev", 8, "missing value");
	refused(EADD "flower indev a/b action drop", 8, "bad name");
	refused(EADD "flower indev vx0 indev vx1 action drop", 9, "duplicate \"indev\"");
	refused(EADD "flower indev action drop", 9, "unknown flower key");
}

/* ---- tc's layout ------------------------------------------------------------ */

static void print_rule(const char *line, enum ctl_flower_verb verb, bool json, const char *want)
{
	struct ctl_flower f;
	parse_ok(line, &f);
	f.verb = verb;
	struct ctl_print p;
	ctl_print_init(&p, json, 0);
	if (verb == CTL_FILTER_SHOW)
		ctl_print_open_array(&p, NULL);
	if (verb == CTL_FILTER_SHOW)
		ctl_flower_print_pref(&p, &f);
	assert_int_equal(ctl_flower_print_rule(&p, &f, NULL, NULL), 0);
	if (verb == CTL_FILTER_SHOW)
		ctl_print_close_array(&p);
	assert_int_equal(ctl_print_finish(&p), 0);
	if (strcmp(ctl_print_data(&p), want))
		fail_msg("%s\n got: [%s]\nwant: [%s]", line, ctl_print_data(&p), want);
	ctl_print_release(&p);
}

#define RULE EADD "pref 1 handle 1 protocol ip flower ip_proto icmp indev vx0 action drop"
#define DROP "\n\taction order 1: gact action drop\n\t random type none pass val 0" \
	     "\n\t index 1 ref 1 bind 1\n\n"

static void test_show_text(void **state)
{
	(void)state;
	print_rule(RULE, CTL_FILTER_SHOW, false,
		   "filter protocol ip pref 1 flower chain 0 \n"
		   "filter protocol ip pref 1 flower chain 0 handle 0x1 \n  indev vx0"
		   "\n  eth_type ipv4\n  ip_proto icmp\n  not_in_hw" DROP);
	print_rule(RULE, CTL_FILTER_GET, false,
		   "filter egress protocol ip pref 1 flower chain 0 handle 0x1 \n  indev vx0"
		   "\n  eth_type ipv4\n  ip_proto icmp\n  not_in_hw" DROP);
	/* an ingress rule's get still says ingress */
	print_rule("filter add dev vnet0 ingress pref 1 handle 1 protocol ip flower indev vnet0 action drop",
		   CTL_FILTER_GET, false,
		   "filter ingress protocol ip pref 1 flower chain 0 handle 0x1 \n  indev vnet0"
		   "\n  eth_type ipv4\n  not_in_hw" DROP);
}

#define JDROP "\"not_in_hw\":true,\"actions\":[{\"order\":1,\"kind\":\"gact\"," \
	"\"control_action\":{\"type\":\"drop\"},\"prob\":{\"random_type\":\"none\"," \
	"\"control_action\":{\"type\":\"pass\"},\"val\":0},\"index\":1,\"ref\":1,\"bind\":1}]}}"

static void test_show_json(void **state)
{
	(void)state;
	print_rule(RULE, CTL_FILTER_SHOW, true,
		   "[{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0},"
		   "{\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,\"options\":{\"handle\":1,"
		   "\"indev\":\"vx0\",\"keys\":{\"eth_type\":\"ipv4\",\"ip_proto\":\"icmp\"}," JDROP "]\n");
	print_rule(RULE, CTL_FILTER_GET, true,
		   "{\"egress\":true,\"protocol\":\"ip\",\"pref\":1,\"kind\":\"flower\",\"chain\":0,"
		   "\"options\":{\"handle\":1,\"indev\":\"vx0\",\"keys\":{\"eth_type\":\"ipv4\","
		   "\"ip_proto\":\"icmp\"}," JDROP "\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_egress_verbs), cmocka_unit_test(test_indev),
		cmocka_unit_test(test_refusals),     cmocka_unit_test(test_show_text),
		cmocka_unit_test(test_show_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
