/* Unit tests for the flow key GRO carries out with each frame (gro.h,
 * gro_emit_fn): a merged frame leaves with its head segment's key plus the
 * merged PSH (plain, VXLAN frame, socket payload); a passed-through frame,
 * a run of one and two flows held at once keep their own keys; a frame
 * that came without a key leaves without one; held runs keep their keys
 * after the caller's are gone.  Fixture: gro_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gro_test_util.h"

/* The key the parser gives the stream's current segment, without GRO. */
static struct flow_key parsed_key_of(struct gro_test *t, const struct stream *s)
{
	struct flow_key key;
	struct pkt *pkt = stream_build(t, s);
	assert_non_null(key_take(t, pkt, &key));
	pkt_free(pkt);
	return key;
}

/* A merged frame leaves with its head segment's key: tunnel section (VNI,
 * outer addresses and ports) and the inner frame's L2..L4, and the PSH the
 * last segment merged into the header.  Before, the callback had no key and
 * the daemon parsed every frame again. */
static void merged_frame_keeps_head_key(uint8_t family, enum stream_mode mode, uint8_t outer_family)
{
	struct gro_test *t = test_new(0, 0, 0);
	struct stream s;
	stream_init(&s, family, mode, outer_family);
	s.in_port = 2;
	s.f.payload_len = MSS;
	struct flow_key want = parsed_key_of(t, &s);
	for (int i = 0; i < 3; i++)
		feed(t, &s, MSS, 0);
	s.f.tcp_flags = TCP_ACK | TCP_PSH;
	feed(t, &s, MSS, 0);

	assert_int_equal(t->sink.n, 1);
	assert_int_equal(stats(t).flushes[GRO_FLUSH_FLAGS], 1);
	assert_true(t->sink.has_key[0]);
	const struct flow_key *got = &t->sink.keys[0];
	assert_int_equal(got->tcp_flags, TCP_ACK | TCP_PSH);
	want.tcp_flags |= TCP_PSH;
	assert_memory_equal(got, &want, FLOW_KEY_MATCH_SIZE);
	assert_memory_equal(&got->tcp_opts, &want.tcp_opts, sizeof(want.tcp_opts));
	assert_int_equal(got->in_port, 2);
	assert_int_equal(got->nw_family, family);
	assert_int_equal(got->tp_src, s.f.src_port);
	assert_int_equal(got->tun_family, mode == MODE_PLAIN ? 0 : (mode == MODE_VXLAN_UDP ? 4 : outer_family));
	assert_int_equal(got->tun_vni, mode == MODE_PLAIN ? 0 : 99);
	gro_test_free(t);
}

static void test_merged_frame_leaves_with_head_key(void **state)
{
	(void)state;
	merged_frame_keeps_head_key(4, MODE_PLAIN, 0);
	merged_frame_keeps_head_key(6, MODE_VXLAN_FRAME, 6);
	merged_frame_keeps_head_key(4, MODE_VXLAN_UDP, 0);
}

/* A frame passed through leaves with the key it came with, a run of one
 * with its own, a frame that came without a key without one; two flows
 * held at once each keep theirs (one slot, one key). */
static void test_unmerged_frames_keep_their_keys(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream a, b;
	stream_init(&a, 4, MODE_VXLAN_UDP, 0);
	stream_init(&b, 4, MODE_VXLAN_UDP, 0);
	b.f.src_port = 4001;
	a.f.payload_len = 0;
	struct flow_key ack_key = parsed_key_of(t, &a);
	feed(t, &a, 0, 0); /* pure ACK: passes */
	a.f.payload_len = MSS;
	b.f.payload_len = MSS;
	struct flow_key a_key = parsed_key_of(t, &a), b_key = parsed_key_of(t, &b);
	feed(t, &a, MSS, 0);
	feed(t, &b, MSS, 0);
	struct pkt *raw = stream_next(t, &a, MSS);
	struct flow_key unused;
	key_take(t, raw, &unused); /* as if never parsed */
	pkt_clear_offsets(raw);
	receive(t, raw, 0);
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);

	assert_int_equal(t->sink.n, 4);
	assert_true(t->sink.has_key[0]);
	assert_memory_equal(&t->sink.keys[0], &ack_key, sizeof(ack_key));
	assert_false(t->sink.has_key[1]); /* the unparsed frame */
	for (unsigned i = 2; i < 4; i++) {
		assert_true(t->sink.has_key[i]);
		const struct flow_key *want = t->sink.keys[i].tp_src == 4001 ? &b_key : &a_key;
		assert_memory_equal(&t->sink.keys[i], want, sizeof(*want));
	}
	assert_int_not_equal(t->sink.keys[2].tp_src, t->sink.keys[3].tp_src);
	gro_test_free(t);
}

/* The caller's keys need only live during the receive call: runs still
 * held when gro_receive_burst() returns leave with the key their head came
 * with although the caller's array was overwritten in between, and a run
 * that merges a PSH inside one burst leaves with it while the caller's key
 * stays as it was (GRO writes only its own copy). */
static void test_held_runs_outlive_the_callers_keys(void **state)
{
	(void)state;
	struct gro_test *t = test_new(0, 0, 0);
	struct stream a, b;
	stream_init(&a, 4, MODE_VXLAN_UDP, 0);
	stream_init(&b, 6, MODE_VXLAN_FRAME, 4);
	b.f.src_port = 4001;
	a.f.payload_len = b.f.payload_len = MSS;
	struct flow_key a_key = parsed_key_of(t, &a), b_key = parsed_key_of(t, &b);
	struct pkt *pkts[4];
	struct flow_key keys[4];
	for (unsigned i = 0; i < 4; i++) {
		pkts[i] = stream_next(t, i % 2 ? &b : &a, MSS);
		assert_non_null(key_take(t, pkts[i], &keys[i]));
	}
	gro_receive_burst(t->gro, pkts, keys, 4, 0);
	memset(keys, 0xa5, sizeof(keys));
	gro_flush(t->gro, GRO_FLUSH_ALL, 0);
	assert_int_equal(t->sink.n, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(t->sink.has_key[i]);
		const struct flow_key *want = t->sink.keys[i].tp_src == 4001 ? &b_key : &a_key;
		assert_memory_equal(&t->sink.keys[i], want, sizeof(*want));
	}

	sink_clear(t);
	pkts[0] = stream_next(t, &a, MSS);
	assert_non_null(key_take(t, pkts[0], &keys[0]));
	struct flow_key head_key = keys[0];
	a.f.tcp_flags = TCP_ACK | TCP_PSH;
	pkts[1] = stream_next(t, &a, MSS);
	assert_non_null(key_take(t, pkts[1], &keys[1]));
	gro_receive_burst(t->gro, pkts, keys, 2, 0);
	assert_int_equal(t->sink.n, 1);
	assert_int_equal(t->sink.keys[0].tcp_flags, head_key.tcp_flags | TCP_PSH);
	assert_memory_equal(&keys[0], &head_key, sizeof(head_key));
	gro_test_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merged_frame_leaves_with_head_key),
		cmocka_unit_test(test_unmerged_frames_keep_their_keys),
		cmocka_unit_test(test_held_runs_outlive_the_callers_keys),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
