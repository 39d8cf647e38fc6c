/* Unit tests for src/switch/forward.c: flooding with split horizon, known
 * unicast, loops to the ingress, VNI isolation with identical MACs in two
 * tenants, invalid sources, and forwarding through a MAC flood.
 *
 * Topology of every test:
 *
 *   VNI 10: local ports 1, 2, 3    remote VTEPs A (192.0.2.1), B (192.0.2.2)
 *   VNI 20: local ports 4, 5       remote VTEP  A
 *   (all VTEPs behind vxlan port 9; VNI 30 exists with no members)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "switch/forward.h"

#define SEC 1000000000ull
#define VXLAN_PORT 9

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
static const uint8_t mac_vm1[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t mac_vm2[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
static const uint8_t mac_far[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xfa };
static const uint8_t mac_far2[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xfb };
static const uint8_t ip_a[4] = { 192, 0, 2, 1 };
static const uint8_t ip_b[4] = { 192, 0, 2, 2 };

struct rig {
	struct fdb *fdb;
	struct vni_table *vnis;
	struct fwd_switch sw;
	struct fwd_result res;
	struct fdb_dst vtep_a, vtep_b;
};

static int rig_setup_with(void **state, uint32_t max_learned)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct fdb_config config = { .max_learned = max_learned, .hash_seed = 42 };
	if (fdb_create(&config, &r->fdb) < 0 || vni_table_create(&r->vnis) < 0)
		return -1;
	r->vtep_a = fdb_dst_vtep4(VXLAN_PORT, ip_a);
	r->vtep_b = fdb_dst_vtep4(VXLAN_PORT, ip_b);
	if (vni_add(r->vnis, 10) || vni_add(r->vnis, 20) || vni_add(r->vnis, 30))
		return -1;
	for (uint16_t p = 1; p <= 3; p++)
		if (vni_add_port(r->vnis, 10, p))
			return -1;
	for (uint16_t p = 4; p <= 5; p++)
		if (vni_add_port(r->vnis, 20, p))
			return -1;
	if (vni_add_vtep(r->vnis, 10, &r->vtep_a) || vni_add_vtep(r->vnis, 10, &r->vtep_b) ||
	    vni_add_vtep(r->vnis, 20, &r->vtep_a))
		return -1;
	fwd_init(&r->sw, r->fdb, r->vnis);
	*state = r;
	return 0;
}

static int rig_setup(void **state)
{
	return rig_setup_with(state, 0);
}

static int rig_setup_small(void **state)
{
	return rig_setup_with(state, 100);
}

static int rig_teardown(void **state)
{
	struct rig *r = *state;
	fdb_destroy(r->fdb);
	vni_table_destroy(r->vnis);
	free(r);
	return 0;
}

static enum fwd_action from_port(struct rig *r, uint16_t port, uint32_t vni,
				 const uint8_t dst[6], const uint8_t src[6], uint64_t now)
{
	struct fdb_dst ingress = fdb_dst_port(port);
	return fwd_frame(&r->sw, &ingress, vni, dst, src, now, &r->res);
}

static enum fwd_action from_vtep(struct rig *r, const struct fdb_dst *vtep, uint32_t vni,
				 const uint8_t dst[6], const uint8_t src[6], uint64_t now)
{
	return fwd_frame(&r->sw, vtep, vni, dst, src, now, &r->res);
}

/* The outputs as a compact string, e.g. "p2 p3 A B", to compare whole sets. */
static const char *outputs_str(const struct rig *r)
{
	static char buf[512];
	size_t n = 0;
	buf[0] = '\0';
	for (uint16_t i = 0; i < r->res.n_outputs; i++) {
		const struct fdb_dst *o = &r->res.outputs[i];
		const char *sep = i ? " " : "";
		if (o->type == FDB_DST_PORT)
			n += snprintf(buf + n, sizeof(buf) - n, "%sp%u", sep, o->port);
		else if (fdb_dst_equal(o, &r->vtep_a))
			n += snprintf(buf + n, sizeof(buf) - n, "%sA", sep);
		else if (fdb_dst_equal(o, &r->vtep_b))
			n += snprintf(buf + n, sizeof(buf) - n, "%sB", sep);
		else
			n += snprintf(buf + n, sizeof(buf) - n, "%s?", sep);
	}
	return buf;
}

static void assert_dropped(const struct rig *r, enum drop_reason reason)
{
	assert_int_equal(r->res.action, FWD_DROP);
	assert_string_equal(drop_reason_name(r->res.reason), drop_reason_name(reason));
	assert_int_equal(r->res.n_outputs, 0);
}

static void test_broadcast_from_port_floods_ports_and_vteps(void **state)
{
	struct rig *r = *state;
	assert_int_equal(from_port(r, 1, 10, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p2 p3 A B");
	assert_int_equal(from_port(r, 2, 10, mcast, mac_vm2, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p1 p3 A B");
	assert_int_equal(r->sw.stats.flooded, 2);
	assert_int_equal(r->sw.stats.flood_copies, 8);
	assert_int_equal(r->sw.stats.replicated, 4);
	assert_int_equal(r->sw.stats.unknown_unicast, 0);
}

static void test_flood_from_vtep_reaches_local_ports_only(void **state)
{
	struct rig *r = *state;
	/* Split horizon: B never gets A's broadcast from us. */
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, bcast, mac_far, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p1 p2 p3");
	/* Unknown unicast likewise. */
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, mac_vm1, mac_far, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p1 p2 p3");
	assert_int_equal(r->sw.stats.unknown_unicast, 1);
	assert_int_equal(r->sw.stats.replicated, 0);
	/* A VTEP not in the flood list is still accepted and learned. */
	uint8_t ip_c[4] = { 203, 0, 113, 7 };
	struct fdb_dst vtep_c = fdb_dst_vtep4(VXLAN_PORT, ip_c);
	assert_int_equal(from_vtep(r, &vtep_c, 10, bcast, mac_far2, SEC), FWD_FLOOD);
	assert_int_equal(from_port(r, 1, 10, mac_far2, mac_vm1, SEC), FWD_UNICAST);
	assert_true(fdb_dst_equal(&r->res.outputs[0], &vtep_c));
}

static void test_learning_turns_flood_into_unicast(void **state)
{
	struct rig *r = *state;
	assert_int_equal(from_port(r, 1, 10, mac_far, mac_vm1, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p2 p3 A B");
	/* The reply from behind VTEP B teaches where mac_far is... */
	assert_int_equal(from_vtep(r, &r->vtep_b, 10, mac_vm1, mac_far, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p1");
	/* ...so the next frame goes to B only. */
	assert_int_equal(from_port(r, 1, 10, mac_far, mac_vm1, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "B");
	assert_int_equal(r->sw.stats.unicast, 2);
	assert_int_equal(r->sw.stats.flooded, 1);

	/* After ageing without traffic it floods again. */
	assert_int_equal(from_port(r, 2, 10, mac_far, mac_vm2, 302 * SEC), FWD_FLOOD);
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_int_equal(st.learned, 3);
}

/* A MAC learned on a local port moves with a datagram from a VTEP, except
 * on an EVPN VNI: there only zebra moves it away (control/evpn.c), and the
 * datagram is still switched. */
static void test_evpn_vni_keeps_local_macs(void **state)
{
	struct rig *r = *state;
	/* VNI 20 plain: vm1 from port 4, then the same MAC from A moves it. */
	assert_int_equal(from_port(r, 4, 20, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_int_equal(from_vtep(r, &r->vtep_a, 20, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_int_equal(from_port(r, 5, 20, mac_vm1, mac_vm2, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "A");
	assert_int_equal(r->sw.stats.evpn_local_kept, 0);

	/* VNI 10 EVPN (a new table, as the control thread publishes one). */
	struct vni_table *t;
	assert_int_equal(vni_table_clone(r->vnis, &t), 0);
	assert_int_equal(vni_set_evpn(t, 10, true), 0);
	assert_int_equal(vni_set_evpn(t, 99, true), -ENOENT);
	vni_table_destroy(r->vnis);
	r->vnis = t;
	r->sw.vnis = t;
	assert_int_equal(from_port(r, 1, 10, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, mac_vm2, mac_vm1, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p1 p2 p3");
	assert_int_equal(r->sw.stats.evpn_local_kept, 1);
	assert_int_equal(from_port(r, 2, 10, mac_vm1, mac_vm2, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p1");
	/* A MAC not local here is still learned behind the VTEP. */
	assert_int_equal(from_vtep(r, &r->vtep_b, 10, bcast, mac_far, SEC), FWD_FLOOD);
	assert_int_equal(from_port(r, 2, 10, mac_far, mac_vm2, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "B");
	/* Once the local entry aged out, the VTEP's datagram learns it. */
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, bcast, mac_vm1, 400 * SEC), FWD_FLOOD);
	assert_int_equal(from_port(r, 2, 10, mac_vm1, mac_vm2, 400 * SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "A");
	assert_int_equal(r->sw.stats.evpn_local_kept, 1);
}

static void test_unicast_back_to_ingress_is_dropped(void **state)
{
	struct rig *r = *state;
	from_port(r, 1, 10, bcast, mac_vm1, SEC);
	from_port(r, 1, 10, bcast, mac_vm2, SEC); /* both behind port 1 */
	assert_int_equal(from_port(r, 1, 10, mac_vm2, mac_vm1, SEC), FWD_DROP);
	assert_dropped(r, DROP_LOOP_TO_INGRESS);

	from_vtep(r, &r->vtep_a, 10, bcast, mac_far, SEC);
	from_vtep(r, &r->vtep_a, 10, bcast, mac_far2, SEC);
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, mac_far2, mac_far, SEC), FWD_DROP);
	assert_dropped(r, DROP_LOOP_TO_INGRESS);
	assert_int_equal(r->sw.stats.drops[DROP_LOOP_TO_INGRESS], 2);
}

static void test_vtep_to_vtep_unicast_is_split_horizon(void **state)
{
	struct rig *r = *state;
	from_vtep(r, &r->vtep_a, 10, bcast, mac_far, SEC);
	assert_int_equal(from_vtep(r, &r->vtep_b, 10, mac_far, mac_far2, SEC), FWD_DROP);
	assert_dropped(r, DROP_SPLIT_HORIZON);
	/* The source was still learned: local ports can reach it. */
	assert_int_equal(from_port(r, 3, 10, mac_far2, mac_vm1, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "B");
}

static void test_identical_macs_in_two_vnis_stay_apart(void **state)
{
	struct rig *r = *state;
	/* mac_vm1 lives on port 1 in VNI 10 and on port 4 in VNI 20. */
	from_port(r, 1, 10, bcast, mac_vm1, SEC);
	from_port(r, 4, 20, bcast, mac_vm1, SEC);
	assert_string_equal(outputs_str(r), "p5 A");
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_int_equal(st.moved, 0);

	assert_int_equal(from_port(r, 2, 10, mac_vm1, mac_vm2, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p1");
	assert_int_equal(from_port(r, 5, 20, mac_vm1, mac_vm2, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p4");
	/* VTEP A carries both VNIs: its frames land in the VNI they name. */
	assert_int_equal(from_vtep(r, &r->vtep_a, 20, mac_vm1, mac_far, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p4");
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, bcast, mac_far, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p1 p2 p3");
	/* A VNI-20 flood never reaches VNI-10 ports or VTEP B. */
	assert_int_equal(from_port(r, 4, 20, mac_far2, mac_vm1, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p5 A");
}

static void test_isolation_refusals(void **state)
{
	struct rig *r = *state;
	/* Port 4 is in VNI 20 only. */
	assert_int_equal(from_port(r, 4, 10, bcast, mac_vm1, SEC), FWD_DROP);
	assert_dropped(r, DROP_PORT_NOT_IN_VNI);
	/* Unknown VNI from the wire. */
	assert_int_equal(from_vtep(r, &r->vtep_a, 77, bcast, mac_far, SEC), FWD_DROP);
	assert_dropped(r, DROP_VXLAN_UNKNOWN_VNI);
	/* Nothing was learned from refused frames. */
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_int_equal(st.n_learned, 0);

	/* A static entry pointing at a port that left the VNI. */
	struct fdb_dst p2 = fdb_dst_port(2);
	assert_int_equal(fdb_add_static(r->fdb, 10, mac_vm2, &p2, 0), 0);
	assert_int_equal(vni_del_port(r->vnis, 10, 2), 0);
	assert_int_equal(from_port(r, 1, 10, mac_vm2, mac_vm1, SEC), FWD_DROP);
	assert_dropped(r, DROP_PORT_NOT_IN_VNI);
	/* And it is no longer part of the flood set. */
	assert_int_equal(from_port(r, 1, 10, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_string_equal(outputs_str(r), "p3 A B");
	assert_int_equal(r->sw.stats.drops[DROP_PORT_NOT_IN_VNI], 2);
}

static void test_empty_flood_set_is_counted(void **state)
{
	struct rig *r = *state;
	assert_int_equal(vni_add_port(r->vnis, 30, 6), 0);
	assert_int_equal(from_port(r, 6, 30, bcast, mac_vm1, SEC), FWD_DROP);
	assert_dropped(r, DROP_FDB_DST_UNKNOWN);
}

/* From a VTEP into a VNI with no local port (a start between its vxlan
 * port and its taps): not the FDB's fault, a reason of its own. */
static void test_flood_from_vtep_without_local_port(void **state)
{
	struct rig *r = *state;
	assert_int_equal(vni_add(r->vnis, 31), 0);
	assert_int_equal(vni_add_vtep(r->vnis, 31, &r->vtep_a), 0);
	assert_int_equal(from_vtep(r, &r->vtep_a, 31, bcast, mac_vm1, SEC), FWD_DROP);
	assert_dropped(r, DROP_NO_LOCAL_PORT);
	assert_int_equal(r->sw.stats.drops[DROP_FDB_DST_UNKNOWN], 0);
}

static void test_invalid_source_is_dropped_and_not_learnt(void **state)
{
	struct rig *r = *state;
	static const uint8_t zero[6] = { 0 };
	assert_int_equal(from_port(r, 1, 10, mac_vm2, bcast, SEC), FWD_DROP);
	assert_dropped(r, DROP_INVALID_SRC_MAC);
	assert_int_equal(from_vtep(r, &r->vtep_a, 10, mac_vm2, mcast, SEC), FWD_DROP);
	assert_int_equal(from_port(r, 1, 10, mac_vm2, zero, SEC), FWD_DROP);
	/* A reply to the poison address floods instead of going anywhere. */
	assert_int_equal(from_port(r, 2, 10, zero, mac_vm2, SEC), FWD_FLOOD);
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_int_equal(st.invalid_src, 3);
	assert_int_equal(st.n_learned, 1);
	assert_int_equal(r->sw.stats.drops[DROP_INVALID_SRC_MAC], 3);
	assert_int_equal(r->sw.stats.dropped, 3);
	assert_int_equal(r->sw.stats.frames, 4);
}

static void test_forwarding_survives_a_mac_flood(void **state)
{
	struct rig *r = *state; /* max_learned 100 */
	enum { FLOOD = 100000 };
	struct fdb_dst p3 = fdb_dst_port(3);
	assert_int_equal(fdb_add_static(r->fdb, 10, mac_vm2, &p3, 0), 0);
	from_port(r, 1, 10, bcast, mac_vm1, SEC);

	uint8_t src[6] = { 0x06, 0, 0, 0, 0, 0 };
	for (uint32_t i = 0; i < FLOOD; i++) {
		src[2] = (uint8_t)(i >> 16);
		src[3] = (uint8_t)(i >> 8);
		src[4] = (uint8_t)i;
		/* A flooding port may even claim the static MAC's identity. */
		const uint8_t *s = i == 500 ? mac_vm2 : src;
		assert_int_equal(from_vtep(r, &r->vtep_a, 10, bcast, s, 2 * SEC), FWD_FLOOD);
	}
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_true(st.n_learned <= 100);
	assert_int_equal(st.n_learned, 100);
	assert_int_equal(st.refused_full, FLOOD - 1 - 99);
	assert_int_equal(st.static_conflicts, 1);
	/* The static and the earlier learnt MAC lose nothing. */
	assert_int_equal(from_port(r, 2, 10, mac_vm2, mac_far, 3 * SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p3");
	assert_int_equal(from_port(r, 2, 10, mac_vm1, mac_far, 3 * SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p1");
}

/* IPv6 underlay: IPv6 VTEPs get head-end copies, are learned, and a MAC
 * moves between them like between IPv4 ones. */
static void test_ipv6_vteps(void **state)
{
	struct rig *r = *state;
	uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	uint8_t ip6_other[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	struct fdb_dst v6 = fdb_dst_vtep6(VXLAN_PORT, ip6), v6_other = fdb_dst_vtep6(VXLAN_PORT, ip6_other);
	assert_int_equal(vni_add_vtep(r->vnis, 20, &v6), 0);

	assert_int_equal(from_port(r, 4, 20, bcast, mac_vm1, SEC), FWD_FLOOD);
	assert_int_equal(r->res.n_outputs, 3); /* p5, A, v6 */
	assert_true(fdb_dst_equal(&r->res.outputs[2], &v6));

	assert_int_equal(from_vtep(r, &v6, 20, mac_vm1, mac_far, SEC), FWD_UNICAST);
	assert_string_equal(outputs_str(r), "p4");
	assert_int_equal(from_port(r, 5, 20, mac_far, mac_vm2, SEC), FWD_UNICAST);
	assert_true(fdb_dst_equal(&r->res.outputs[0], &v6));
	/* The far MAC moves to another IPv6 VTEP. */
	assert_int_equal(from_vtep(r, &v6_other, 20, mac_vm1, mac_far, 2 * SEC), FWD_UNICAST);
	assert_int_equal(from_port(r, 5, 20, mac_far, mac_vm2, 2 * SEC), FWD_UNICAST);
	assert_true(fdb_dst_equal(&r->res.outputs[0], &v6_other));
	struct fdb_stats st;
	fdb_get_stats(r->fdb, &st);
	assert_int_equal(st.moved, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_broadcast_from_port_floods_ports_and_vteps, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_flood_from_vtep_reaches_local_ports_only, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_learning_turns_flood_into_unicast, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_unicast_back_to_ingress_is_dropped, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_evpn_vni_keeps_local_macs, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_vtep_to_vtep_unicast_is_split_horizon, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_identical_macs_in_two_vnis_stay_apart, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_isolation_refusals, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_empty_flood_set_is_counted, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_flood_from_vtep_without_local_port, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_invalid_source_is_dropped_and_not_learnt, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_vteps, rig_setup, rig_teardown),
		cmocka_unit_test_setup_teardown(test_forwarding_survives_a_mac_flood, rig_setup_small, rig_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
