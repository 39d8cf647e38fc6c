/* Unit tests for src/report/metrics_text.c: the Prometheus exposition of a
 * snapshot built by hand.  Checks the format's rules (HELP and TYPE before
 * every family's samples, each family once, histograms cumulative with
 * +Inf == _count, label escaping) and that each number is the snapshot's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/metrics_text.h"

static struct vxd_snapshot snap;
static struct vxd_port_snap ps[2];

static char *render(const struct metrics_input *in)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(metrics_text_write(f, in), 0);
	fclose(f);
	return text;
}

static char *render_default(void)
{
	memset(&snap, 0, sizeof(snap));
	memset(ps, 0, sizeof(ps));
	ps[0].stats.rx_frames = 20;
	ps[0].stats.rx_bytes = 1960;
	ps[0].stats.tx_frames = 7;
	ps[0].stats.tx_bytes = 123456;
	ps[0].stats.drops[DROP_MTU_EXCEEDED] = 3;
	ps[0].stats.tx_hist_frames[0] = 4;
	ps[0].stats.tx_hist_bytes[0] = 400;
	ps[0].stats.tx_hist_frames[4] = 3;
	ps[0].stats.tx_hist_bytes[4] = 123056;
	ps[1].lost_ns = 5;
	ps[1].sock.rx_queue_drops = 33;
	snap.drops[DROP_VXLAN_UNKNOWN_VNI] = 9;
	snap.gro.segs_per_frame[0] = 10;  /* 10 frames of 1 segment */
	snap.gro.segs_per_frame[5] = 2;   /* 2 frames of 32..63 */
	snap.gro.frames_out = 12;
	snap.gro.merged_frames = 2;
	snap.gro.merged_segments = 90;
	snap.gro.segments_in = 100;
	snap.gro.flushes[GRO_FLUSH_BATCH_END] = 11;
	static const struct metrics_port ports[2] = {
		{ .name = "vnet0", .type = "tap", .vni = 99, .snap = &ps[0], .has_kernel = true, .kernel_tx_dropped = 12 },
		{ .name = "vx\"9\\9", .type = "vxlan", .vni = 99, .snap = &ps[1], .vxlan = true },
	};
	static const struct metrics_thread_cpu cpu[1] = { { "worker0", 1500000, 250 } };
	struct metrics_input in = { .snap = &snap, .ports = ports, .n_ports = 2, .cpu = cpu, .n_cpu = 1 };
	return render(&in);
}

static void assert_line(const char *text, const char *line)
{
	char want[512];
	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		fail_msg("no line \"%s\" in:\n%s", line, text);
}

static void test_values(void **state)
{
	(void)state;
	char *t = render_default();
	assert_line(t, "vxswitch_port_rx_packets_total{port=\"vnet0\",vni=\"99\",type=\"tap\"} 20");
	assert_line(t, "vxswitch_port_rx_bytes_total{port=\"vnet0\",vni=\"99\",type=\"tap\"} 1960");
	assert_line(t, "vxswitch_port_tx_packets_total{port=\"vnet0\",vni=\"99\",type=\"tap\"} 7");
	assert_line(t, "vxswitch_port_tx_bytes_total{port=\"vnet0\",vni=\"99\",type=\"tap\"} 123456");
	assert_line(t, "vxswitch_port_drops_total{port=\"vnet0\",vni=\"99\",type=\"tap\",reason=\"mtu_exceeded\"} 3");
	/* Zeros are there too. */
	assert_line(t, "vxswitch_port_drops_total{port=\"vnet0\",vni=\"99\",type=\"tap\",reason=\"tx_error\"} 0");
	assert_line(t, "vxswitch_drops_total{reason=\"vxlan_unknown_vni\"} 9");
	assert_line(t, "vxswitch_port_up{port=\"vnet0\",vni=\"99\",type=\"tap\"} 1");
	assert_line(t, "vxswitch_gro_flushes_total{reason=\"batch_end\"} 11");
	assert_line(t, "vxswitch_port_tap_queue_drops_total{port=\"vnet0\",vni=\"99\",type=\"tap\"} 12");
	assert_line(t, "vxswitch_port_socket_rx_queue_drops_total{port=\"vx\\\"9\\\\9\",vni=\"99\",type=\"vxlan\"} 33");
	/* Each only for its kind of port. */
	assert_null(strstr(t, "vxswitch_port_socket_rx_queue_drops_total{port=\"vnet0\""));
	assert_null(strstr(t, "vxswitch_port_tap_queue_drops_total{port=\"vx"));
	assert_line(t, "vxswitch_gro_segments_total 100");
	assert_line(t, "vxswitch_cpu_seconds_total{thread=\"worker0\",mode=\"user\"} 1.500000");
	assert_line(t, "vxswitch_cpu_seconds_total{thread=\"worker0\",mode=\"system\"} 0.000250");
	free(t);
}

static void test_label_escaping(void **state)
{
	(void)state;
	char *t = render_default();
	assert_line(t, "vxswitch_port_up{port=\"vx\\\"9\\\\9\",vni=\"99\",type=\"vxlan\"} 0");
	free(t);
}

static void test_histograms_cumulative(void **state)
{
	(void)state;
	char *t = render_default();
	const char *p = "vxswitch_port_tx_frame_size_bytes";
	char line[256];
	const char *le[] = { "1535", "8191", "16383", "32767", "65535", "+Inf" };
	const unsigned cum[] = { 4, 4, 4, 4, 7, 7 };
	for (unsigned i = 0; i < 6; i++) {
		snprintf(line, sizeof(line), "%s_bucket{port=\"vnet0\",vni=\"99\",type=\"tap\",le=\"%s\"} %u", p, le[i],
			 cum[i]);
		assert_line(t, line);
	}
	snprintf(line, sizeof(line), "%s_sum{port=\"vnet0\",vni=\"99\",type=\"tap\"} 123456", p);
	assert_line(t, line);
	snprintf(line, sizeof(line), "%s_count{port=\"vnet0\",vni=\"99\",type=\"tap\"} 7", p);
	assert_line(t, line);
	assert_line(t, "vxswitch_gro_segments_per_frame_bucket{le=\"1\"} 10");
	assert_line(t, "vxswitch_gro_segments_per_frame_bucket{le=\"31\"} 10");
	assert_line(t, "vxswitch_gro_segments_per_frame_bucket{le=\"63\"} 12");
	assert_line(t, "vxswitch_gro_segments_per_frame_bucket{le=\"+Inf\"} 12");
	/* 10 single segments + the 90 of the two merged frames */
	assert_line(t, "vxswitch_gro_segments_per_frame_sum 100");
	assert_line(t, "vxswitch_gro_segments_per_frame_count 12");
	free(t);
}

/* The family of a sample: its name up to '{' or ' ', less a histogram's
 * _bucket/_sum/_count. */
static void family_of(const char *line, char *fam, size_t size, const char *hist)
{
	size_t n = strcspn(line, "{ ");
	snprintf(fam, size, "%.*s", (int)n, line);
	size_t hl = strlen(hist);
	if (hl && !strncmp(fam, hist, hl))
		fam[hl] = 0;
}

/* Every sample follows its family's HELP then TYPE; no family twice. */
static void test_help_type_order(void **state)
{
	(void)state;
	char *t = render_default();
	char seen[64][96];
	unsigned n_seen = 0;
	char cur[96] = "", hist[96] = "";
	unsigned samples = 0;
	for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
		char name[96], type[32];
		if (sscanf(line, "# HELP %95s", name) == 1) {
			for (unsigned i = 0; i < n_seen; i++)
				assert_string_not_equal(seen[i], name);
			assert_true(n_seen < 64);
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", name);
			snprintf(cur, sizeof(cur), "%s", name);
			continue;
		}
		if (sscanf(line, "# TYPE %95s %31s", name, type) == 2) {
			assert_string_equal(name, cur);
			snprintf(hist, sizeof(hist), "%s", strcmp(type, "histogram") ? "" : name);
			continue;
		}
		char fam[96];
		family_of(line, fam, sizeof(fam), hist);
		assert_string_equal(fam, cur);
		samples++;
	}
	assert_true(n_seen >= 15);
	assert_true(samples > 2 * DROP_REASON_COUNT);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_histograms_cumulative),
		cmocka_unit_test(test_help_type_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
