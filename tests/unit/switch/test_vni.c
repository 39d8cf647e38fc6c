/* Unit tests for src/switch/vni.c: the sorted VNI table, flood-set
 * membership and its limits, clone independence and publication. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "switch/vni.h"
#include "util/failpoint.h"

static const uint8_t vtep1_ip[4] = { 192, 0, 2, 1 };
static const uint8_t vtep2_ip[4] = { 192, 0, 2, 2 };

static void test_add_del_keeps_order(void **state)
{
	(void)state;
	static const uint32_t order_added[] = { 500, 7, 16777215, 99, 0, 1000 };
	struct vni_table *t;
	assert_int_equal(vni_table_create(&t), 0);
	assert_non_null(t);

	for (size_t i = 0; i < sizeof(order_added) / sizeof(order_added[0]); i++)
		assert_int_equal(vni_add(t, order_added[i]), 0);
	assert_int_equal(vni_add(t, 99), -EEXIST);
	assert_int_equal(vni_add(t, 16777216), -EINVAL);
	assert_int_equal(vni_table_count(t), 6);
	uint32_t prev = 0;
	for (uint32_t i = 0; i < vni_table_count(t); i++) {
		const struct vni *v = vni_table_at(t, i);
		assert_non_null(v);
		if (i)
			assert_true(v->vni > prev);
		prev = v->vni;
	}
	assert_null(vni_table_at(t, 6));
	for (size_t i = 0; i < sizeof(order_added) / sizeof(order_added[0]); i++) {
		const struct vni *v = vni_lookup(t, order_added[i]);
		assert_non_null(v);
		assert_int_equal(v->vni, order_added[i]);
	}
	assert_null(vni_lookup(t, 98));
	assert_null(vni_lookup(t, 100));

	assert_int_equal(vni_del(t, 99), 0);
	assert_int_equal(vni_del(t, 99), -ENOENT);
	assert_null(vni_lookup(t, 99));
	assert_non_null(vni_lookup(t, 500));
	assert_non_null(vni_lookup(t, 0));
	assert_int_equal(vni_table_count(t), 5);
	vni_table_destroy(t);
	vni_table_destroy(NULL);
}

static void test_table_limit(void **state)
{
	(void)state;
	struct vni_table *t;
	assert_int_equal(vni_table_create(&t), 0);
	for (uint32_t i = 0; i < VNI_TABLE_MAX; i++)
		assert_int_equal(vni_add(t, VNI_TABLE_MAX - i), 0); /* descending: worst case */
	assert_int_equal(vni_add(t, 1u << 20), -ENOSPC);
	assert_non_null(vni_lookup(t, 1));
	assert_non_null(vni_lookup(t, VNI_TABLE_MAX));
	assert_null(vni_lookup(t, 0));
	vni_table_destroy(t);
}

static void test_ports_and_vteps(void **state)
{
	(void)state;
	struct vni_table *t;
	assert_int_equal(vni_table_create(&t), 0);
	struct fdb_dst v1 = fdb_dst_vtep4(9, vtep1_ip), v2 = fdb_dst_vtep4(9, vtep2_ip);
	struct fdb_dst p1 = fdb_dst_port(1);

	assert_int_equal(vni_add_port(t, 10, 1), -ENOENT);
	assert_int_equal(vni_add(t, 10), 0);
	assert_int_equal(vni_add_port(t, 10, 1), 0);
	assert_int_equal(vni_add_port(t, 10, 2), 0);
	assert_int_equal(vni_add_port(t, 10, 1), -EEXIST);
	assert_int_equal(vni_add_vtep(t, 10, &v1), 0);
	assert_int_equal(vni_add_vtep(t, 10, &v1), -EEXIST);
	assert_int_equal(vni_add_vtep(t, 10, &p1), -EINVAL);
	assert_int_equal(vni_add_vtep(t, 11, &v2), -ENOENT);

	const struct vni *v = vni_lookup(t, 10);
	assert_true(vni_has_port(v, 1));
	assert_true(vni_has_port(v, 2));
	assert_false(vni_has_port(v, 3));
	assert_true(vni_has_vtep(v, &v1));
	assert_false(vni_has_vtep(v, &v2));

	assert_int_equal(vni_del_port(t, 10, 1), 0);
	assert_int_equal(vni_del_port(t, 10, 1), -ENOENT);
	assert_false(vni_has_port(v, 1));
	assert_int_equal(v->n_ports, 1);
	assert_int_equal(v->ports[0], 2);
	assert_int_equal(vni_del_vtep(t, 10, &v2), -ENOENT);
	assert_int_equal(vni_del_vtep(t, 10, &v1), 0);
	assert_int_equal(v->n_vteps, 0);

	for (uint16_t p = 100; p < 100 + VNI_MAX_PORTS - 1; p++)
		assert_int_equal(vni_add_port(t, 10, p), 0);
	assert_int_equal(vni_add_port(t, 10, 999), -ENOSPC);
	for (uint32_t i = 0; i < VNI_MAX_VTEPS; i++) {
		uint8_t ip[4] = { 198, 51, 100, (uint8_t)i };
		struct fdb_dst vt = fdb_dst_vtep4(9, ip);
		assert_int_equal(vni_add_vtep(t, 10, &vt), 0);
	}
	uint8_t ip[4] = { 203, 0, 113, 1 };
	struct fdb_dst extra = fdb_dst_vtep4(9, ip);
	assert_int_equal(vni_add_vtep(t, 10, &extra), -ENOSPC);
	vni_table_destroy(t);
}

static void test_clone_is_independent_and_publish_swaps(void **state)
{
	(void)state;
	struct vni_table_ref ref = { NULL };
	struct vni_table *t1;
	assert_int_equal(vni_table_create(&t1), 0);
	assert_int_equal(vni_add(t1, 10), 0);
	assert_int_equal(vni_add_port(t1, 10, 1), 0);
	assert_null(vni_table_publish(&ref, t1));
	assert_ptr_equal(vni_table_current(&ref), t1);

	/* The control thread edits a copy; readers of t1 see no change. */
	struct vni_table *t2;
	assert_int_equal(vni_table_clone(vni_table_current(&ref), &t2), 0);
	assert_non_null(t2);
	assert_int_equal(vni_add_port(t2, 10, 2), 0);
	assert_int_equal(vni_add(t2, 20), 0);
	assert_false(vni_has_port(vni_lookup(t1, 10), 2));
	assert_null(vni_lookup(t1, 20));
	assert_true(vni_has_port(vni_lookup(t2, 10), 2));

	assert_ptr_equal(vni_table_publish(&ref, t2), t1);
	assert_ptr_equal(vni_table_current(&ref), t2);
	vni_table_destroy(t1);

	struct vni_table *empty, *empty_clone;
	assert_int_equal(vni_table_create(&empty), 0);
	assert_int_equal(vni_table_clone(empty, &empty_clone), 0);
	assert_non_null(empty_clone);
	assert_int_equal(vni_table_count(empty_clone), 0);
	assert_null(vni_lookup(empty_clone, 0));
	vni_table_destroy(empty);
	vni_table_destroy(empty_clone);
	vni_table_destroy(vni_table_publish(&ref, NULL));
}

/* The failpoint "vni_table_clone": -ENOMEM with no table, the published one
 * untouched and still usable, the next clone fine. */
static void test_clone_failpoint(void **state)
{
	(void)state;
	struct vni_table_ref ref = { NULL };
	struct vni_table *t1, *t2 = (struct vni_table *)&ref;
	assert_int_equal(vni_table_create(&t1), 0);
	assert_int_equal(vni_add(t1, 10), 0);
	assert_null(vni_table_publish(&ref, t1));

	failpoint_arm("vni_table_clone", 0, 1);
	assert_int_equal(vni_table_clone(vni_table_current(&ref), &t2), -ENOMEM);
	assert_null(t2);
	assert_ptr_equal(vni_table_current(&ref), t1);
	assert_non_null(vni_lookup(vni_table_current(&ref), 10));

	assert_int_equal(vni_table_clone(vni_table_current(&ref), &t2), 0);
	assert_non_null(vni_lookup(t2, 10));
	vni_table_destroy(vni_table_publish(&ref, t2));
	vni_table_destroy(vni_table_publish(&ref, NULL));
	failpoint_disarm_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_del_keeps_order),
		cmocka_unit_test(test_table_limit),
		cmocka_unit_test(test_ports_and_vteps),
		cmocka_unit_test(test_clone_is_independent_and_publish_swaps),
		cmocka_unit_test(test_clone_failpoint),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
