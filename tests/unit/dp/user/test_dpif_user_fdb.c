/* The FDB through the datapath interface (dp/dpif.h, "The FDB"), on the
 * userspace datapath opened for real (one worker thread, an empty view):
 * the datapath makes its table from dpif_config.fdb; an operator's static
 * entry and an EVPN one are added, found, shown and deleted by kind (an
 * EVPN entry does not replace an operator's; an EVPN delete leaves an
 * operator's entry); a flush of learned entries keeps both; the per-VNI
 * cap is refused above the table's capacity, which the call says; a
 * port's max-macs and its forgetting; the snapshot carries the FDB's
 * counts for present ports and the table's totals. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dp/user/dpif_user.h"
#include "dp/user/worker.h"
#include "util/qsbr.h"

static uint64_t now_ns = 1000000000ull;

static uint64_t test_clock(void)
{
	return now_ns;
}

struct rig {
	struct qsbr qsbr;
	struct vxd_view view;
	struct vxd_view *_Atomic slot;
	struct dpif *dp;
};

static int setup(void **state)
{
	struct rig *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	qsbr_init(&r->qsbr);
	r->slot = &r->view;
	struct dpif_config cfg = {
		.qsbr = &r->qsbr,
		.view = &r->slot,
		.fdb = { .max_learned = 64, .max_learned_per_vni = 16, .hash_seed = 7 },
		.pool_size = 64,
		.n_workers = 1,
		.clock = test_clock,
	};
	assert_int_equal(dpif_user_class.open(&cfg, &r->dp, NULL, 0), 0);
	assert_ptr_equal(r->dp->class, &dpif_user_class);
	*state = r;
	return 0;
}

static int teardown(void **state)
{
	struct rig *r = *state;
	r->dp->class->close(r->dp);
	free(r);
	return 0;
}

static const uint8_t MAC[6] = { 0x02, 0, 0, 0, 0, 0x11 };
static const uint8_t VTEP[4] = { 198, 51, 100, 2 };

static int count_one(const struct fdb_entry_info *e, void *ctx)
{
	(void)e;
	(*(unsigned *)ctx)++;
	return 0;
}

static unsigned entries(struct dpif *dp, uint32_t vni)
{
	unsigned n = 0;
	assert_int_equal(dp->class->fdb_dump(dp, vni, count_one, &n), 0);
	return n;
}

static void test_static_and_evpn_by_kind(void **state)
{
	struct rig *r = *state;
	struct dpif *dp = r->dp;
	const struct dpif_class *c = dp->class;
	struct fdb_dst port3 = fdb_dst_port(3), vtep = fdb_dst_vtep4(9, VTEP), got;

	assert_false(c->fdb_lookup(dp, 5, MAC, &got));
	assert_int_equal(c->fdb_add(dp, DPIF_FDB_STATIC, 5, MAC, &port3), 0);
	assert_true(c->fdb_lookup(dp, 5, MAC, &got));
	assert_true(fdb_dst_equal(&got, &port3));
	assert_false(c->fdb_lookup(dp, 6, MAC, &got)); /* another VNI */
	/* BGP EVPN does not take an operator's entry, nor delete it */
	assert_int_equal(c->fdb_add(dp, DPIF_FDB_EVPN, 5, MAC, &vtep), -EEXIST);
	assert_int_equal(c->fdb_del(dp, DPIF_FDB_EVPN, 5, MAC), -ENOENT);
	assert_true(c->fdb_lookup(dp, 5, MAC, &got) && fdb_dst_equal(&got, &port3));
	assert_int_equal(c->fdb_del(dp, DPIF_FDB_STATIC, 5, MAC), 0);
	assert_false(c->fdb_lookup(dp, 5, MAC, &got));
	assert_int_equal(c->fdb_del(dp, DPIF_FDB_STATIC, 5, MAC), -ENOENT);

	assert_int_equal(c->fdb_add(dp, DPIF_FDB_EVPN, 5, MAC, &vtep), 0);
	assert_true(c->fdb_lookup(dp, 5, MAC, &got) && fdb_dst_equal(&got, &vtep));
	assert_int_equal(c->fdb_add(dp, DPIF_FDB_STATIC, 7, MAC, &port3), 0);
	assert_int_equal(entries(dp, FDB_VNI_ANY), 2);
	assert_int_equal(entries(dp, 5), 1);
	/* `fdb flush` takes learned entries only */
	struct fdb_flush_filter learned = { .vni = FDB_VNI_ANY, .kinds = FDB_FLUSH_LEARNED };
	assert_int_equal(c->fdb_flush(dp, &learned), 0);
	assert_int_equal(entries(dp, FDB_VNI_ANY), 2);
	/* a port's removal: everything behind it */
	struct fdb_flush_filter behind3 = { .vni = FDB_VNI_ANY, .dst = &port3, .kinds = FDB_FLUSH_ALL };
	assert_int_equal(c->fdb_flush(dp, &behind3), 1);
	assert_int_equal(c->fdb_del(dp, DPIF_FDB_EVPN, 5, MAC), 0);
	assert_int_equal(entries(dp, FDB_VNI_ANY), 0);
}

static void test_limits(void **state)
{
	struct rig *r = *state;
	struct dpif *dp = r->dp;
	uint32_t capacity = 0;
	assert_int_equal(dp->class->fdb_set_vni_max(dp, 65, &capacity), -ERANGE);
	assert_int_equal(capacity, 64);
	assert_int_equal(dp->class->fdb_set_vni_max(dp, 64, &capacity), 0);
	assert_int_equal(dp->class->fdb_set_port_max(dp, 3, 2), 0);
	assert_int_equal(dp->class->fdb_set_port_max(dp, FDB_PORT_LIMIT, 2), -ERANGE);
	dp->class->fdb_set_ageing(dp, 5ull * 1000000000ull);
	dp->class->fdb_port_forget(dp, 3);
}

static void test_snapshot_has_the_fdb(void **state)
{
	struct rig *r = *state;
	struct dpif *dp = r->dp;
	struct fdb_dst port3 = fdb_dst_port(3);
	assert_int_equal(dp->class->fdb_add(dp, DPIF_FDB_STATIC, 5, MAC, &port3), 0);
	static struct vxd_snapshot snap;
	memset(&snap, 0xff, sizeof(snap));
	assert_int_equal(dp->class->snapshot(dp, &snap), 0);
	assert_int_equal(snap.fdb.n_static, 1);
	assert_int_equal(snap.fdb.n_learned, 0);
	assert_int_equal(snap.fdb.n_evpn, 0);
	assert_false(snap.ports[3].present); /* no port attached: no port counts */
	assert_int_equal(snap.ports[3].fdb.max, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_static_and_evpn_by_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_snapshot_has_the_fdb, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
