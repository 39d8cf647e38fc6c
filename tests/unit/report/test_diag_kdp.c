/* diagnose of the kernel datapath (report/diag_kdp.h): crafted inputs,
 * each finding and its fields, and none for a healthy switch. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/diag_kdp.h"

#define SEC 1000000000ull

static struct diag_kdp_input *healthy(void)
{
	struct diag_kdp_input *k = calloc(1, sizeof(*k));
	k->now_ns = 100 * SEC;
	strcpy(k->tun_name, "vxdp0");
	k->tun_attached = 1;
	k->n_ports = 2;
	struct diag_kdp_port *vm = &k->ports[0], *vx = &k->ports[1];
	strcpy(vm->name, "vnet1");
	strcpy(vm->dev, "vnet1");
	vm->vni = 99;
	vm->attached = 1;
	vm->mtu = 1450;
	vm->c.tx_packets = 1000;
	vm->c.tx_bytes = 64ull << 20;
	vm->c.hist_bytes[4] = 60ull << 20;
	vm->c.hist_bytes[0] = 4ull << 20;
	vm->c.drops[VXDP_DROP_FLOOD_DONE] = 50; /* flooded originals: not a problem */
	vm->c.upcalls = 3;
	strcpy(vx->name, "vx99");
	vx->vxlan = true;
	vx->vni = 99;
	vx->dst_port = 4789;
	vx->family = 4;
	vx->underlay_mtu = 1500;
	vx->n_remotes = 1;
	strcpy(vx->remotes[0].addr, "198.51.100.2");
	vx->remotes[0].s = (struct vxdp_vtep_stats){ .tx_packets = 100, .rx_packets = 90,
						      .last_tx_ns = 99 * SEC, .last_rx_ns = 99 * SEC + 1 };
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
	k->ports[1].remotes[0].s.last_rx_ns = 95 * SEC;
	k->ports[1].remotes[0].s.last_tx_ns = 99 * SEC;
	k->ports[0].c.upcall_drops = 7;
	k->ports[0].c.drops[VXDP_DROP_INVALID_SRC_MAC] = 4;
	k->ports[0].c.drops[VXDP_DROP_LOOP_TO_INGRESS] = 2;
	k->ports[0].mtu = 1500;
	k->ports[0].c.hist_bytes[4] = 0;
	k->ports[0].c.hist_bytes[1] = 60ull << 20;
	k->tun_attached = 0;
	/* a rules port whose lookups mostly miss */
	k->ports[0].rules = true;
	k->ports[0].rs = (struct vxdp_rstats){ .hits = 1000, .misses = 2500, .stale = 500 };
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
	struct diag_kdp_port *p = &k->ports[0];
	p->rules = true;
	p->rs = (struct vxdp_rstats){ .hits = 0, .misses = DIAG_KDP_THRASH_MIN_MISSES - 1 };
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING)); /* too few to judge */
	p->rs = (struct vxdp_rstats){ .hits = 1000000, .misses = 5000 };
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING)); /* established flows hit */
	p->rs = (struct vxdp_rstats){ .hits = 5000, .misses = 5000 };
	k->rules_cache_full = 12;
	judge(k, r, NULL);
	const struct diag_finding *f = diag_find(r, DIAG_RULES_CACHE_THRASHING);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "cache_full"), 12);
	assert_non_null(strstr(f->text, "cache was full"));
	p->rules = false; /* no rules: its counters are not the rules path's */
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_RULES_CACHE_THRASHING));
	/* A vxlan port with rules (the vxlan device's lookups) is judged too. */
	struct diag_kdp_port *vx = &k->ports[1];
	vx->rules = true;
	vx->rs = (struct vxdp_rstats){ .hits = 100, .misses = 3000 };
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
	k->ports[1].remotes[0].s.last_rx_ns = 98 * SEC;
	k->ports[1].remotes[0].s.last_tx_ns = 99 * SEC;
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_REMOTE_SILENT));
	k->ports[1].remotes[0].s = (struct vxdp_vtep_stats){ .tx_packets = 4, .last_tx_ns = 99 * SEC };
	judge(k, r, NULL);
	assert_null(diag_find(r, DIAG_REMOTE_SILENT)); /* fewer than 5 sent */
	k->ports[1].remotes[0].s.tx_packets = 5;
	judge(k, r, NULL);
	assert_non_null(diag_find(r, DIAG_REMOTE_SILENT));
	k->ports[0].attached = -ENODEV;
	judge(k, r, NULL);
	const struct diag_finding *f = diag_find(r, DIAG_PROGRAM_NOT_ATTACHED);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "device_gone"), 1);
	/* A VNI with a VM and no vxlan port. */
	k->ports[0].vni = 7;
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
