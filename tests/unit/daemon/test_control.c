/* Unit tests for src/daemon/control.c and what it dispatches to
 * (stats_print.c, diagnose.c): commands executed against a switch built
 * without a control socket (vxd_execute, as the socket and the config file
 * use it).  The vxlan ports use the loopback device; the tap cases run
 * only as root (they create real TAP devices). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctl/ctl_cmd.h"
#include "ctl/ctl_print.h"
#include "daemon/datapath.h"

static uint16_t test_port;

/* Runs one command line; returns the daemon's status, output in *out
 * (caller releases), error in err. */
static int run(struct vxd *vxd, bool json, struct ctl_print *out, struct ctl_err *err, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	char *words[CTL_MAX_WORDS];
	int n = ctl_split_words(line, words, CTL_MAX_WORDS);
	assert_true(n > 0);
	struct ctl_cmd cmd;
	memset(err, 0, sizeof(*err));
	assert_int_equal(ctl_cmd_parse(n, (const char *const *)words, &cmd, err), 0);
	ctl_print_init(out, json, 0);
	int ret = vxd_execute(vxd, &cmd, out, err);
	assert_int_equal(ctl_print_finish(out), 0);
	return ret;
}

static int setup(void **state)
{
	struct vxd_options opts = { .ctl_path = NULL, .pool_size = 64, .quiet = true };
	struct vxd *vxd;
	if (vxd_create(&opts, &vxd) < 0)
		return -1;
	test_port = (uint16_t)(20000 + (getpid() * 13) % 30000);
	*state = vxd;
	return 0;
}

static int teardown(void **state)
{
	vxd_destroy(*state);
	return 0;
}

static void test_vxlan_ports_share_a_socket_and_report_mtu(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx99 type vxlan vni 99 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	/* Loopback routes report an MTU of 65535 (IP_MAX_MTU): 65485 fits. */
	assert_non_null(strstr(ctl_print_data(&out), "inner MTU that fits is 65485"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx100 type vxlan vni 100 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	/* Same VNI again on that socket: refused with a reason. */
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx99b type vxlan vni 99 local 127.0.0.1 remote 127.0.0.3 dstport %u", test_port), -EEXIST);
	assert_non_null(strstr(err.msg, "vni 99 already"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port add vx99 type tap"), -EEXIST);
	assert_string_equal(err.msg, "port vx99: exists");
	ctl_print_release(&out);

	assert_int_equal(run(vxd, true, &out, &err, "port show"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"name\":\"vx100\""));
	ctl_print_release(&out);

	assert_int_equal(run(vxd, false, &out, &err, "port del vx99"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx99"), -ENOENT);
	assert_string_equal(err.msg, "port vx99: no such port");
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx100"), 0);
	ctl_print_release(&out);
}

static void test_fdb_static_entry_via_remote(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx7 type vxlan vni 7 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:09 vni 7 remote 127.0.0.5"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:09 vni 8 remote 127.0.0.5"), -ENOENT);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb show vni 7"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "02:00:00:00:00:09 vni 7 port vx7 remote 127.0.0.5 static"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb del 02:00:00:00:00:09 vni 7"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb del 02:00:00:00:00:09 vni 7"), -ENOENT);
	ctl_print_release(&out);
	/* Deleting the port flushes what pointed at it. */
	assert_int_equal(run(vxd, false, &out, &err, "fdb add 02:00:00:00:00:0a vni 7 remote 127.0.0.6"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx7"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "fdb show"), 0);
	assert_string_equal(ctl_print_data(&out), "");
	ctl_print_release(&out);
}

static void test_knobs_set_and_show(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err, "set gro off"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set gro-max-size 32000"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"gro\":false"));
	assert_non_null(strstr(ctl_print_data(&out), "\"gro-max-size\":32000"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 10"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"fdb-max\":10"));
	ctl_print_release(&out);
	/* Above the table sized at start-up: refused, the old value stays. */
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 100000"), -ERANGE);
	assert_non_null(strstr(err.msg, "fdb-max 100000: above the 65536 learned entries"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "show knobs"), 0);
	assert_non_null(strstr(ctl_print_data(&out), "\"fdb-max\":10"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set fdb-max 8192"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "set gro on"), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "diagnose"), 0);
	assert_string_equal(ctl_print_data(&out), "no problem found\n");
	ctl_print_release(&out);
}

static void test_stats_json_has_every_section(void **state)
{
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx5 type vxlan vni 5 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, true, &out, &err, "stats"), 0);
	const char *s = ctl_print_data(&out);
	const char *keys[] = { "\"ports\":[", "\"tx_size_hist\":[", "\"socket\":{", "\"switch\":{",
			       "\"gro\":{", "\"segs_per_frame_hist\":[", "\"gso\":{", "\"cpu\":{", "\"us_per_kb\":" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_non_null(strstr(s, keys[i]));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "stats port nosuch"), -ENOENT);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx5"), 0);
	ctl_print_release(&out);
}

static void test_tap_port_warns_when_mtu_does_not_fit(void **state)
{
	if (geteuid() != 0)
		skip();
	struct vxd *vxd = *state;
	struct ctl_print out;
	struct ctl_err err;
	/* A veth-like 1500 underlay is not at hand without root netns work;
	 * loopback gives 65485 as what fits, so ask for a bigger VM MTU. */
	assert_int_equal(run(vxd, false, &out, &err,
			     "port add vx3 type vxlan vni 3 local 127.0.0.1 remote 127.0.0.2 dstport %u", test_port), 0);
	ctl_print_release(&out);
	char name[16];
	snprintf(name, sizeof(name), "vxut%d", (int)(getpid() % 100000));
	assert_int_equal(run(vxd, false, &out, &err, "port add %s type tap vni 3 mtu 65521", name), 0);
	assert_non_null(strstr(ctl_print_data(&out), "is larger than the 65485 that fits"));
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del %s", name), 0);
	ctl_print_release(&out);
	assert_int_equal(run(vxd, false, &out, &err, "port del vx3"), 0);
	ctl_print_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vxlan_ports_share_a_socket_and_report_mtu),
		cmocka_unit_test(test_fdb_static_entry_via_remote),
		cmocka_unit_test(test_knobs_set_and_show),
		cmocka_unit_test(test_stats_json_has_every_section),
		cmocka_unit_test(test_tap_port_warns_when_mtu_does_not_fit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
