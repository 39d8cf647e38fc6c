/* diagnose of a datapath's own ports (report/diag_kdp.h): crafted inputs,
 * each finding and its fields, and none for a healthy switch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "report/diag_kdp.h"

#define SEC 1000000000ull
#define NEVER UINT64_MAX

/* A datapath's own drop reasons: the first is no loss (not_lost). */
static const char *const drop_names[] = { "flood_original", "invalid_src_mac", "loop_to_ingress" };
enum { FLOOD_ORIGINAL, INVALID_SRC_MAC, LOOP_TO_INGRESS };

static struct diag_kdp_input *healthy(void)
{
	struct diag_kdp_input *k = calloc(1, sizeof(*k));
	strcpy(k->dp.dev, "vxdp0");
	k->dp.dev_program = "vxdp_tun_ingress";
	k->dp.dev_attached = 1;
	k->dp.rule_cache = true;
	k->n_ports = 2;
	struct dpif_port_stats *vm = &k->ports[0].st, *vx = &k->ports[1].st;
	strcpy(vm->name, "vnet1");
	strcpy(vm->dev, "vnet1");
	vm->program = "vxdp_port_ingress";
	vm->vni = 99;
	vm->attached = 1;
	vm->mtu = 1450;
	vm->tx_frames = 1000;
	vm->tx_bytes = 64ull << 20;
	vm->tx_hist_bytes[4] = 60ull << 20;
	vm->tx_hist_bytes[0] = 4ull << 20;
	vm->drop_names = drop_names;
	vm->n_drop_reasons = 3;
	vm->not_lost = 1u << FLOOD_ORIGINAL;
	vm->drops[FLOOD_ORIGINAL] = 50; /* flooded originals: not a problem */
	vm->upcalls = 3;
	strcpy(vx->name, "vx99");
	vx->vxlan = true;
	vx->attached = 1;
	vx->vni = 99;
	vx->dst_port = 4789;
	vx->underlay_family = AF_INET;
	vx->mtu = 1500;
	k->ports[1].n_remotes = 1;
	strcpy(k->ports[1].remotes[0].addr, "198.51.100.2");
	/* heard from it just after the last frame sent to it, 1 s ago */
	k->ports[1].remotes[0].s = (struct dpif_vtep_stats){ .tx_frames = 100, .rx_frames = 90,
							     .tx_age_ns = 1 * SEC, .rx_age_ns = 1 * SEC - 1 };
	return k;
}

static void judge(const struct diag_kdp_input *k, struct diag_report *r, const char *only)
{
	struct diag_input in;
	memset(&in, 0, sizeof(in));
	in.only = only;
	in.knobs[CTL_KNOB_UPCALL_RATE] = 250;
	in.knobs[CTL_KNOB_UPCALL_BURST] = 40;
	memset(r, 0, sizeof(*r));
	diag_judge_kdp(&in, k, r);
}

static void test_healthy_no_finding(void **state)
{
	(void)state;
	struct diag_kdp_input *k = healthy();
	struct diag_report *r = calloc(1, sizeof(*r));
	judge(k, r, NULL);
	assert_int_equal(r->n, 0);
	free(k);
	free(r);
}

static void test_each_finding(void **state)
{
	(void)state;
	struct diag_kdp_input *k = healthy();
	struct diag_report *r = calloc(1, sizeof(*r));
	/* silent: sent 10, heard nothing after the last rx 5 s ago */
	k->ports[1].remotes[0].s.rx_age_ns = 5 * SEC;
	k->ports[1].remotes[0].s.tx_age_ns = 1 * SEC;
	struct dpif_port_stats *vm = &k->ports[0].st;
	vm->upcall_drops = 7;
	vm->drops[INVALID_SRC_MAC] = 4;
	vm->drops[LOOP_TO_INGRESS] = 2;
	vm->mtu = 1500;
	vm->tx_hist_bytes[4] = 0;
	vm->tx_hist_bytes[1] = 60ull << 20;
	k->dp.dev_attached = 0;
	/* a rules port whose lookups mostly miss */
	vm->rule_path = true;
	vm->rule_hits = 1000, vm->rule_misses = 2500, vm->rule_stale = 500;
	judge(k, r, NULL);
	const struct diag_finding *f = diag_find(r, DIAG_REMOTE_SILENT);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "sent"), 100);
	assert_int_equal(diag_field_num(f, "silent_s"), 5);
	assert_non_null(f = diag_find(r, DIAG_UPCALLS_DROPPED));
	assert_int_equal(diag_field_num(f, "upcall_drops"), 7);
	/* the limit it names is the knobs' */
	assert_int_equal(diag_field_num(f, "upcall_rate"), 250);
	assert_non_null(strstr(f->text, "upcall-rate 250/s, upcall-burst 40"));
	assert_string_equal(f->port, "vnet1");
	assert_non_null(f = diag_find(r, DIAG_PORT_DROPS));
	assert_int_equal(diag_field_num(f, "dropped"), 4); /* the commonest, flood_original left out */
	assert_non_null(strstr(f->text, "as invalid_src_mac")); /* named by the datapath */
	assert_non_null(f = diag_find(r, DIAG_MTU_UNDERLAY));
	assert_int_equal(diag_field_num(f, "fits"), 1450);
	assert_non_null(f = diag_find(r, DIAG_SMALL_FRAMES_KERNEL));
	assert_true(diag_field_num(f, "small_permille") >= 900);
	assert_non_null(f = diag_find(r, DIAG_PROGRAM_NOT_ATTACHED));
	assert_string_equal(f->port, ""); /* the vxlan device: the switch's */
	assert_non_null(f = diag_find(r, DIAG_RULES_CACHE_THRASHING));
	assert_int_equal(diag_field_num(f, "misses"), 3000);
	assert_int_equal(diag_field_num(f, "miss_permille"), 750);
	assert_non_null(strstr(f->text, "exact flows"));
	/* only one port's: the device's finding is left out */
	judge(k, r, "vnet1");
	assert_null(diag_find(r, DIAG_PROGRAM_NOT_ATTACHED));
	assert_null(diag_find(r, DIAG_REMOTE_SILENT));
	assert_non_null(diag_find(r, DIAG_UPCALLS_DROPPED));
	free(k);
	free(r);
}

/* Thrashing needs both enough misses and a miss share of half or more;
 * a full cache says so. */
static void test_rules_cache_edges(void **state)
{
	(void)state;
	struct diag_kdp_input *k = healthy();
	struct diag_report *r = calloc(1, sizeof(*r));
	struct dpif_port_stats *p = &k->ports[0].st;
	p->rule_path = true;
	p->rule_hits = 0, p->rule_misses = DIAG_KDP_THRASH_MIN_MISSES - 1;
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING)); /* too few to judge */
	p->rule_hits = 1000000, p->rule_misses = 5000;
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING)); /* established flows hit */
	p->rule_hits = 5000, p->rule_misses = 5000;
	k->dp.rule_cache_full = 12;
	judge(k, r, NULL);
	const struct diag_finding *f = diag_find(r, DIAG_RULES_CACHE_THRASHING);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "cache_full"), 12);
	assert_non_null(strstr(f->text, "cache was full"));
	p->rule_path = false; /* no rules: its counters are not the rules path's */
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING));
	/* A vxlan port with rules (the vxlan device's lookups) is judged too. */
	struct dpif_port_stats *vx = &k->ports[1].st;
	vx->rule_path = true;
	vx->rule_hits = 100, vx->rule_misses = 3000;
	judge(k, r, NULL);
	f = diag_find(r, DIAG_RULES_CACHE_THRASHING);
	assert_non_null(f);
	assert_non_null(strstr(f->text, vx->name));
	assert_int_equal(diag_field_num(f, "misses"), 3000);
	free(k);
	free(r);
}

static void test_silent_edges_and_gone_device(void **state)
{
	(void)state;
	struct diag_kdp_input *k = healthy();
	struct diag_report *r = calloc(1, sizeof(*r));
	/* heard 2 s ago after our last send: not silent; never heard: silent */
	k->ports[1].remotes[0].s.rx_age_ns = 2 * SEC;
	k->ports[1].remotes[0].s.tx_age_ns = 1 * SEC;
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_REMOTE_SILENT));
	k->ports[1].remotes[0].s = (struct dpif_vtep_stats){ .tx_frames = 4, .tx_age_ns = 1 * SEC, .rx_age_ns = NEVER };
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_REMOTE_SILENT)); /* fewer than 5 sent */
	k->ports[1].remotes[0].s.tx_frames = 5;
	judge(k, r, NULL);
	assert_non_null(diag_find(r, DIAG_REMOTE_SILENT));
	k->ports[0].st.attached = -ENODEV;
	judge(k, r, NULL);
	const struct diag_finding *f = diag_find(r, DIAG_PROGRAM_NOT_ATTACHED);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "device_gone"), 1);
	/* A VNI with a VM and no vxlan port. */
	k->ports[0].st.vni = 7;
	judge(k, r, NULL);
	assert_non_null(f = diag_find(r, DIAG_VNI_NO_VXLAN));
	assert_int_equal(diag_field_num(f, "vni"), 7);
	free(k);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_no_finding),
		cmocka_unit_test(test_each_finding),
		cmocka_unit_test(test_silent_edges_and_gone_device),
		cmocka_unit_test(test_rules_cache_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
