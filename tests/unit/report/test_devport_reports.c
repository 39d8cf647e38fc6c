/* The reports over the dpif counter operations (report/metrics_dp.c,
 * diagnose_dp.c) with a datapath that is neither of ours: a table of
 * crafted counters behind a dpif class of its own, with its own drop
 * reasons and program name.  What the reports print must come from the
 * operations alone: its reason names, its ports and VTEPs, its figures. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "control/vxd_internal.h"
#include "dp/dpif.h"
#include "report/diag.h"
#include "report/metrics_text.h"

#define SEC 1000000000ull

static const char *const toy_drops[] = { "toy_copied", "toy_bad_vlan" };

/* Port ids 7 (a VM port) and 9 (a vxlan port with one VTEP). */
static int toy_port_dump(struct dpif *dp, unsigned *cursor, uint16_t *id)
{
	(void)dp;
	static const uint16_t ids[] = { 7, 9 };
	if (*cursor >= 2)
		return -ENOENT;
	*id = ids[(*cursor)++];
	return 0;
}

static int toy_port_stats(struct dpif *dp, uint16_t id, struct dpif_port_stats *o)
{
	(void)dp;
	memset(o, 0, sizeof(*o));
	o->vni = 42;
	o->attached = 1;
	o->drop_names = toy_drops;
	o->n_drop_reasons = 2;
	o->not_lost = 1u << 0;
	if (id == 7) {
		snprintf(o->name, sizeof(o->name), "toyvm");
		snprintf(o->dev, sizeof(o->dev), "toyvm");
		o->type = "toy";
		o->program = "toy_prog";
		o->rx_frames = 11, o->rx_bytes = 1100, o->tx_frames = 22, o->tx_bytes = 2200;
		o->drops[0] = 500; /* no loss: not judged */
		o->drops[1] = 33;
		o->upcalls = 5, o->upcall_drops = 4;
		return 0;
	}
	if (id == 9) {
		snprintf(o->name, sizeof(o->name), "toyvx");
		o->type = "vxlan";
		o->vxlan = true;
		o->dst_port = 4789;
		o->underlay_family = AF_INET;
		return 0;
	}
	return -ENOENT;
}

static unsigned toy_vtep_reads;

static int toy_port_vteps(struct dpif *dp, uint16_t id, struct dpif_vtep_stats *out, unsigned max)
{
	(void)dp;
	toy_vtep_reads++;
	if (id != 9 || max < 1)
		return -ENOENT;
	/* 12 frames sent, the last 1 s ago; nothing ever back */
	out[0] = (struct dpif_vtep_stats){ .remote = { .family = AF_INET, .bytes = { 203, 0, 113, 9 } },
					   .tx_frames = 12, .tx_bytes = 1200, .tx_age_ns = 1 * SEC,
					   .rx_age_ns = UINT64_MAX };
	return 1;
}

static int toy_dp_stats(struct dpif *dp, struct dpif_dp_stats *o)
{
	(void)dp;
	memset(o, 0, sizeof(*o));
	o->attach = "toy";
	return 0; /* no device of its own: dev "" */
}

static const struct dpif_class toy_class = {
	.name = "toy",
	.port_dump = toy_port_dump,
	.port_stats = toy_port_stats,
	.port_vteps = toy_port_vteps,
	.dp_stats = toy_dp_stats,
};

static char *metrics_of(struct dpif *dp)
{
	struct metrics_port ports[8];
	size_t n = 0;
	struct vxd_devport_metrics *m = vxd_devport_metrics_read(dp, ports, 8, &n);
	assert_non_null(m);
	assert_int_equal(n, 1); /* the vxlan port is its VTEPs' series */
	assert_string_equal(ports[0].name, "toyvm");
	assert_int_equal(ports[0].snap->stats.tx_bytes, 2200);
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	vxd_devport_metrics_write(m, out);
	fclose(out);
	vxd_devport_metrics_free(m);
	return text;
}

static void test_metrics_from_dpif(void **state)
{
	(void)state;
	struct dpif dp = { .class = &toy_class };
	toy_vtep_reads = 0;
	char *t = metrics_of(&dp);
	/* one read of the vxlan port's VTEPs for the three families */
	assert_int_equal(toy_vtep_reads, 1);
	assert_non_null(strstr(t, "vxswitch_kdp_port_drops_total{port=\"toyvm\",vni=\"42\",type=\"toy\","
				  "reason=\"toy_bad_vlan\"} 33\n"));
	assert_non_null(strstr(t, "vxswitch_kdp_port_upcall_drops_total{port=\"toyvm\",vni=\"42\",type=\"toy\"} 4\n"));
	assert_non_null(strstr(t, "vxswitch_kdp_program_attached{port=\"toyvm\",vni=\"42\",type=\"toy\"} 1\n"));
	assert_non_null(strstr(t, "vxswitch_kdp_vtep_tx_frames_total{port=\"toyvx\",vni=\"42\",type=\"vxlan\","
				  "remote=\"203.0.113.9\"} 12\n"));
	assert_non_null(strstr(t, "vxswitch_kdp_vtep_rx_frames_total{port=\"toyvx\",vni=\"42\",type=\"vxlan\","
				  "remote=\"203.0.113.9\"} 0\n"));
	assert_non_null(strstr(t, "vxswitch_kdp_vtep_last_rx_seconds{port=\"toyvx\",vni=\"42\",type=\"vxlan\","
				  "remote=\"203.0.113.9\"} -1\n"));
	free(t);
}

static void test_diagnose_from_dpif(void **state)
{
	(void)state;
	struct dpif dp = { .class = &toy_class };
	struct diag_input *in = calloc(1, sizeof(*in));
	struct diag_report *r = calloc(1, sizeof(*r));
	in->knobs[CTL_KNOB_UPCALL_RATE] = 100;
	vxd_devport_diag(&dp, in, r);
	const struct diag_finding *f = diag_find(r, DIAG_PORT_DROPS);
	assert_non_null(f);
	assert_int_equal(diag_field_num(f, "dropped"), 33); /* toy_copied is no loss */
	assert_non_null(strstr(f->text, "as toy_bad_vlan"));
	assert_non_null(f = diag_find(r, DIAG_UPCALLS_DROPPED));
	assert_string_equal(f->port, "toyvm");
	assert_non_null(f = diag_find(r, DIAG_REMOTE_SILENT));
	assert_int_equal(diag_field_num(f, "sent"), 12);
	assert_non_null(strstr(f->text, "203.0.113.9"));
	/* no device of its own: nothing judged of one */
	assert_null(diag_find(r, DIAG_PROGRAM_NOT_ATTACHED));
	free(in);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_from_dpif),
		cmocka_unit_test(test_diagnose_from_dpif),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
