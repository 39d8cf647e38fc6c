/* Unit tests for src/packet/csum.c: known vectors (RFC 1071, a real IPv4
 * header), property tests of the unrolled sum against a byte-pair reference
 * over random buffers, lengths and alignments (fixed seed), the scalar and
 * AVX2 loops against each other, pkt chains with odd-length frags,
 * pseudo-headers, RFC 1624 updates and completing a partial checksum as a
 * NIC would. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "csum_reference.h"
#include "packet/bytes.h"
#include "packet/csum.h"
#include "packet/hdr.h"
#include "packet/pkt.h"

/* Deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

static void fill_random(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)rng();
}

static void test_rfc1071_example(void **state)
{
	(void)state;
	/* RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2,
	 * so the checksum field is ~ddf2 = 220d in network order. */
	const uint8_t bytes[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t csum = csum_buf(bytes, sizeof(bytes));
	uint8_t stored[2];
	memcpy(stored, &csum, 2);
	assert_int_equal(stored[0], 0x22);
	assert_int_equal(stored[1], 0x0d);

	uint16_t partial = csum_fold_nocomplement(csum_partial(bytes, sizeof(bytes), 0));
	memcpy(stored, &partial, 2);
	assert_int_equal(stored[0], 0xdd);
	assert_int_equal(stored[1], 0xf2);
}

static void test_ipv4_header_known_vector(void **state)
{
	(void)state;
	/* A real header (192.168.0.1 -> 192.168.0.199, UDP) whose checksum
	 * is b861. */
	uint8_t ip[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	assert_true(csum_ipv4_hdr_ok(ip, sizeof(ip)));
	ip[8] = 0x3f; /* TTL decremented without fixing the checksum */
	assert_false(csum_ipv4_hdr_ok(ip, sizeof(ip)));
	csum_ipv4_hdr_set(ip, sizeof(ip));
	assert_true(csum_ipv4_hdr_ok(ip, sizeof(ip)));
	assert_int_equal(ip[10], 0xb9);
	assert_int_equal(ip[11], 0x61);
}

static void test_fold(void **state)
{
	(void)state;
	assert_int_equal(csum_fold_nocomplement(0), 0);
	assert_int_equal(csum_fold_nocomplement(0xffff), 0xffff);
	assert_int_equal(csum_fold_nocomplement(0x10000), 1);
	assert_int_equal(csum_fold_nocomplement(0xffffffff), 0xffff);
	assert_int_equal(csum_fold_nocomplement(0x1fffe), 0xffff);
	assert_int_equal(csum_fold(0x1234), 0xedcb);
	assert_int_equal(csum_buf(NULL, 0), 0xffff);
}

/* Every length 0..300 at every alignment 0..15 exactly, then random long
 * lengths, all with a random starting sum. */
static void test_partial_matches_reference(void **state)
{
	(void)state;
	enum { BUF = 70000 };
	uint8_t *buf = malloc(BUF + 16);
	assert_non_null(buf);
	fill_random(buf, BUF + 16);

	for (size_t align = 0; align < 16; align++) {
		for (size_t len = 0; len <= 300; len++) {
			uint32_t seed = rng();
			assert_int_equal(csum_fold_nocomplement(csum_partial(buf + align, len, seed)),
					 csum_fold_nocomplement(csum_ref_sum(buf + align, len, seed)));
		}
	}
	for (int i = 0; i < 300; i++) {
		size_t align = rng() % 16, len = rng() % BUF;
		uint32_t seed = rng();
		assert_int_equal(csum_fold_nocomplement(csum_partial(buf + align, len, seed)),
				 csum_fold_nocomplement(csum_ref_sum(buf + align, len, seed)));
	}
	free(buf);
}

/* All-0xff input makes every 64-bit add carry: the deferred carries must
 * come out right. */
static void test_partial_carry_heavy_input(void **state)
{
	(void)state;
	static uint8_t ones[65536 + 7];
	memset(ones, 0xff, sizeof(ones));
	for (size_t len = 0; len < sizeof(ones); len += 997) {
		assert_int_equal(csum_fold_nocomplement(csum_partial(ones + 3, len, 0xffffffffu)),
				 csum_fold_nocomplement(csum_ref_sum(ones + 3, len, 0xffffffffu)));
	}
	assert_int_equal(csum_fold_nocomplement(csum_partial(ones, sizeof(ones), 0xffffffffu)),
			 csum_fold_nocomplement(csum_ref_sum(ones, sizeof(ones), 0xffffffffu)));
}

/* csum_partial() runs one of two loops depending on the CPU: both must give
 * the same checksum for every buffer, or a frame's verdict would depend on
 * the machine.  Lengths around the AVX2 loop's 64-byte rounds and the scalar
 * loop's 32-byte ones, every alignment in a cache line, random seeds
 * (including the extremes) and carry-heavy all-0xff data. */
static void assert_both_loops_agree(const uint8_t *buf, size_t len, uint32_t seed)
{
	uint16_t want = csum_fold_nocomplement(csum_ref_sum(buf, len, seed));
	assert_int_equal(csum_fold_nocomplement(csum_partial_scalar(buf, len, seed)), want);
	if (csum_partial_avx2_supported())
		assert_int_equal(csum_fold_nocomplement(csum_partial_avx2(buf, len, seed)), want);
	assert_int_equal(csum_fold_nocomplement(csum_partial(buf, len, seed)), want);
}

static void test_scalar_and_avx2_loops_agree(void **state)
{
	(void)state;
	if (!csum_partial_avx2_supported())
		print_message("no AVX2 on this CPU: only the scalar loop is checked\n");
	enum { BUF = 66000 };
	uint8_t *buf = malloc(BUF + 64);
	assert_non_null(buf);
	fill_random(buf, BUF + 64);
	static const uint32_t seeds[] = { 0, 1, 0xffff, 0x10000, 0xfffffffeu, 0xffffffffu };

	for (size_t align = 0; align < 64; align++)
		for (size_t len = 0; len <= 260; len++)
			assert_both_loops_agree(buf + align, len, seeds[(align + len) % 6]);
	for (int i = 0; i < 2000; i++) {
		size_t align = rng() % 64, len = rng() % BUF;
		assert_both_loops_agree(buf + align, len, rng());
	}
	memset(buf, 0xff, BUF + 64);
	for (size_t len = 0; len <= BUF; len += 61)
		assert_both_loops_agree(buf + len % 64, len, 0xffffffffu);
	free(buf);
}

/* Past CSUM_AVX2_MAX_LEN the AVX2 lanes could overflow: it must hand such
 * buffers to the scalar loop and still be right. */
static void test_avx2_loop_long_buffer(void **state)
{
	(void)state;
	size_t len = CSUM_AVX2_MAX_LEN + 130;
	uint8_t *buf = malloc(len);
	assert_non_null(buf);
	memset(buf, 0xff, len);
	assert_both_loops_agree(buf, len, 0xffffffffu);
	assert_both_loops_agree(buf + 1, len - 1, 7);
	free(buf);
}

/* Splits `frame` into a linear part and frags of random sizes (many odd). */
static struct pkt *make_chain(struct pkt_pool *pool, const uint8_t *frame, uint32_t len)
{
	struct pkt *p = pkt_alloc(pool);
	assert_non_null(p);
	uint32_t linear = len ? rng() % (len + 1) : 0;
	assert_int_equal(pkt_set_data(p, frame, linear), 0);
	uint32_t at = linear;
	while (at < len) {
		uint32_t left = len - at;
		uint32_t n = p->nr_frags == PKT_MAX_FRAGS - 1 ? left : 1 + rng() % (left < 97 ? left : 97);
		assert_int_equal(pkt_add_frag(p, frame + at, n, NULL), 0);
		at += n;
	}
	assert_int_equal(pkt_len(p), len);
	return p;
}

static void test_pkt_chain_matches_reference(void **state)
{
	(void)state;
	enum { FRAME = 3000 };
	static uint8_t frame[FRAME];
	fill_random(frame, sizeof(frame));
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);

	for (int i = 0; i < 2000; i++) {
		uint32_t len = rng() % FRAME;
		struct pkt *p = make_chain(pool, frame, len);
		uint32_t ofs = len ? rng() % len : 0;
		uint32_t n = len - ofs ? rng() % (len - ofs + 1) : 0;
		uint32_t seed = rng() & 0xffff;
		assert_int_equal(csum_fold_nocomplement(csum_pkt(p, ofs, n, seed)),
				 csum_fold_nocomplement(csum_ref_sum(frame + ofs, n, seed)));
		pkt_free(p);
	}
	pkt_pool_destroy(pool);
}

/* One-byte frags: every piece is odd and every other piece starts odd. */
static void test_pkt_chain_of_single_bytes(void **state)
{
	(void)state;
	static const uint8_t frame[9] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x11 };
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
	struct pkt *p = pkt_alloc(pool);
	assert_int_equal(pkt_set_data(p, frame, 1), 0);
	for (int i = 1; i < 9; i++)
		assert_int_equal(pkt_add_frag(p, frame + i, 1, NULL), 0);
	for (uint32_t ofs = 0; ofs < 9; ofs++)
		assert_int_equal(csum_fold_nocomplement(csum_pkt(p, ofs, 9 - ofs, 0)),
				 csum_fold_nocomplement(csum_ref_sum(frame + ofs, 9 - ofs, 0)));
	/* A range running past the end sums only the bytes that exist. */
	assert_int_equal(csum_fold_nocomplement(csum_pkt(p, 5, 100, 0)),
			 csum_fold_nocomplement(csum_ref_sum(frame + 5, 4, 0)));
	pkt_free(p);
	pkt_pool_destroy(pool);
}

static void test_pseudo_headers_match_their_bytes(void **state)
{
	(void)state;
	for (int i = 0; i < 200; i++) {
		uint8_t src[16], dst[16];
		fill_random(src, sizeof(src));
		fill_random(dst, sizeof(dst));
		uint8_t proto = (uint8_t)rng();
		uint32_t len4 = rng() & 0xffff, len6 = rng();

		/* RFC 768/793: src, dst, zero, proto, 16-bit length. */
		const uint8_t ph4[12] = { src[0], src[1], src[2], src[3], dst[0], dst[1], dst[2], dst[3], 0, proto,
					  (uint8_t)(len4 >> 8), (uint8_t)len4 };
		assert_int_equal(csum_fold_nocomplement(csum_pseudo_ipv4(src, dst, proto, len4)),
				 csum_fold_nocomplement(csum_ref_sum(ph4, sizeof(ph4), 0)));

		/* RFC 8200 8.1: src, dst, 32-bit length, 3 zero bytes, next hdr. */
		uint8_t ph6[40];
		memcpy(ph6, src, 16);
		memcpy(ph6 + 16, dst, 16);
		const uint8_t tail[8] = { (uint8_t)(len6 >> 24), (uint8_t)(len6 >> 16), (uint8_t)(len6 >> 8), (uint8_t)len6,
					  0, 0, 0, proto };
		memcpy(ph6 + 32, tail, 8);
		assert_int_equal(csum_fold_nocomplement(csum_pseudo_ipv6(src, dst, proto, len6)),
				 csum_fold_nocomplement(csum_ref_sum(ph6, sizeof(ph6), 0)));
	}
}

/* +0 and -0: the two encodings of zero in one's complement. */
static bool csum_equivalent(uint16_t a, uint16_t b)
{
	return a == b || ((a == 0 || a == 0xffff) && (b == 0 || b == 0xffff));
}

static void test_incremental_update_matches_recompute(void **state)
{
	(void)state;
	uint8_t buf[64];
	for (int i = 0; i < 2000; i++) {
		fill_random(buf, sizeof(buf));
		uint16_t before = csum_buf(buf, sizeof(buf));
		size_t at = (rng() % 15) * 4; /* word-aligned in the buffer */

		uint16_t old16 = load16(buf + at), new16 = (uint16_t)rng();
		memcpy(buf + at, &new16, 2);
		uint16_t after = csum_buf(buf, sizeof(buf));
		assert_true(csum_equivalent(csum_update16(before, old16, new16), after));

		uint32_t old32, new32 = rng();
		memcpy(&old32, buf + at, 4);
		memcpy(buf + at, &new32, 4);
		uint16_t after32 = csum_buf(buf, sizeof(buf));
		assert_true(csum_equivalent(csum_update32(after, old32, new32), after32));
	}
	/* A TTL decrement on the known IPv4 header: b861 -> b961. */
	uint16_t field, old_word, new_word;
	const uint8_t f[2] = { 0xb8, 0x61 }, o[2] = { 0x40, 0x11 }, n[2] = { 0x3f, 0x11 };
	memcpy(&field, f, 2);
	memcpy(&old_word, o, 2);
	memcpy(&new_word, n, 2);
	uint16_t updated = csum_update16(field, old_word, new_word);
	uint8_t out[2];
	memcpy(out, &updated, 2);
	assert_int_equal(out[0], 0xb9);
	assert_int_equal(out[1], 0x61);
}

/* Builds Ethernet + IPv4 + L4 header (+ payload in random frags) with the
 * pseudo-header sum in the checksum field, as a NEEDS_CSUM frame carries. */
static struct pkt *make_partial_frame(struct pkt_pool *pool, uint8_t proto, const uint8_t *payload,
				      uint32_t payload_len, uint8_t *frame_out)
{
	const uint32_t l3 = ETH_HDR_LEN, l4 = l3 + IPV4_HDR_LEN;
	const uint32_t l4_hdr = proto == IP_PROTO_TCP ? TCP_HDR_LEN : UDP_HDR_LEN;
	const uint32_t csum_ofs = proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
	uint8_t *f = frame_out;
	memset(f, 0, l4 + l4_hdr);
	f[12] = 0x08;
	f[l3] = 0x45;
	f[l3 + 9] = proto;
	const uint8_t src[4] = { 192, 0, 2, 1 }, dst[4] = { 192, 0, 2, 2 };
	memcpy(f + l3 + 12, src, 4);
	memcpy(f + l3 + 16, dst, 4);
	for (uint32_t i = 0; i < l4_hdr; i++)
		f[l4 + i] = (uint8_t)(i * 7 + 1);
	if (proto == IP_PROTO_TCP)
		f[l4 + 12] = 0x50;
	memcpy(f + l4 + l4_hdr, payload, payload_len);
	uint32_t l4_len = l4_hdr + payload_len;
	if (proto == IP_PROTO_UDP) {
		f[l4 + 4] = (uint8_t)(l4_len >> 8);
		f[l4 + 5] = (uint8_t)l4_len;
	}
	uint16_t pseudo = csum_fold_nocomplement(csum_pseudo_ipv4(src, dst, proto, l4_len));
	memcpy(f + l4 + csum_ofs, &pseudo, 2);

	struct pkt *p = pkt_alloc(pool);
	uint32_t total = l4 + l4_len, linear = l4 + l4_hdr + (payload_len ? rng() % payload_len : 0);
	assert_int_equal(pkt_set_data(p, f, linear), 0);
	uint32_t at = linear;
	while (at < total) {
		uint32_t n = 1 + rng() % 301;
		if (n > total - at || p->nr_frags == PKT_MAX_FRAGS - 1)
			n = total - at;
		assert_int_equal(pkt_add_frag(p, f + at, n, NULL), 0);
		at += n;
	}
	return p;
}

/* The completed frame verifies: pseudo-header + L4 sums to -0. */
static bool l4_csum_verifies(const struct pkt *p, uint8_t proto)
{
	const uint32_t l3 = ETH_HDR_LEN, l4 = l3 + IPV4_HDR_LEN;
	uint32_t l4_len = pkt_len(p) - l4;
	uint32_t sum = csum_pseudo_ipv4(p->data + l3 + 12, p->data + l3 + 16, proto, l4_len);
	return csum_fold(csum_pkt(p, l4, l4_len, sum)) == 0;
}

static void test_complete_partial_tcp_and_udp(void **state)
{
	(void)state;
	static uint8_t payload[9000], frame[9100];
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
	const uint8_t protos[2] = { IP_PROTO_TCP, IP_PROTO_UDP };
	for (int i = 0; i < 400; i++) {
		uint8_t proto = protos[i & 1];
		uint32_t len = rng() % sizeof(payload);
		fill_random(payload, len);
		struct pkt *p = make_partial_frame(pool, proto, payload, len, frame);
		uint16_t csum_offset = proto == IP_PROTO_TCP ? TCP_CSUM_OFFSET : UDP_CSUM_OFFSET;
		assert_int_equal(csum_complete_partial(p, ETH_HDR_LEN + IPV4_HDR_LEN, csum_offset), 0);
		assert_true(l4_csum_verifies(p, proto));
		pkt_free(p);
	}
	pkt_pool_destroy(pool);
}

/* A UDP datagram whose checksum computes to 0 must carry 0xffff: 0 means
 * "no checksum" on the wire. */
static void test_complete_partial_udp_zero_becomes_ffff(void **state)
{
	(void)state;
	uint8_t payload[2] = { 0, 0 }, frame[64];
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
	struct pkt *p = make_partial_frame(pool, IP_PROTO_UDP, payload, 2, frame);
	/* Choose the payload word so the full sum is 0xffff, i.e. the folded
	 * checksum is 0. */
	uint16_t rest = csum_fold_nocomplement(csum_pkt(p, ETH_HDR_LEN + IPV4_HDR_LEN, 10, 0));
	uint16_t fill = (uint16_t)(0xffff - rest);
	pkt_free(p);
	memcpy(payload, &fill, 2);
	p = make_partial_frame(pool, IP_PROTO_UDP, payload, 2, frame);
	assert_int_equal(csum_complete_partial(p, ETH_HDR_LEN + IPV4_HDR_LEN, UDP_CSUM_OFFSET), 0);
	uint8_t field[2];
	assert_int_equal(pkt_copy_out(p, ETH_HDR_LEN + IPV4_HDR_LEN + UDP_CSUM_OFFSET, 2, field), 0);
	assert_int_equal(field[0], 0xff);
	assert_int_equal(field[1], 0xff);
	assert_true(l4_csum_verifies(p, IP_PROTO_UDP));
	pkt_free(p);
	pkt_pool_destroy(pool);
}

static void test_complete_partial_field_outside_linear(void **state)
{
	(void)state;
	uint8_t frame[64] = { 0 };
	struct pkt_pool *pool;
	assert_int_equal(pkt_pool_create(1, &pool), 0);
	struct pkt *p = pkt_alloc(pool);
	assert_int_equal(pkt_set_data(p, frame, 40), 0);
	assert_int_equal(pkt_add_frag(p, frame + 40, 24, NULL), 0);
	assert_int_equal(csum_complete_partial(p, 34, 4), 0);       /* field at 38..39 */
	assert_int_equal(csum_complete_partial(p, 34, 5), -EINVAL); /* 39..40 straddles the frag */
	assert_int_equal(csum_complete_partial(p, 34, 6), -EINVAL); /* 40..41 lies in the frag */
	assert_int_equal(csum_complete_partial(p, 100, 0), -EINVAL);
	assert_int_equal(csum_complete_partial(p, 0xffff, 0xffff), -EINVAL);
	pkt_free(p);
	pkt_pool_destroy(pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc1071_example),
		cmocka_unit_test(test_ipv4_header_known_vector),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_partial_matches_reference),
		cmocka_unit_test(test_partial_carry_heavy_input),
		cmocka_unit_test(test_scalar_and_avx2_loops_agree),
		cmocka_unit_test(test_avx2_loop_long_buffer),
		cmocka_unit_test(test_pkt_chain_matches_reference),
		cmocka_unit_test(test_pkt_chain_of_single_bytes),
		cmocka_unit_test(test_pseudo_headers_match_their_bytes),
		cmocka_unit_test(test_incremental_update_matches_recompute),
		cmocka_unit_test(test_complete_partial_tcp_and_udp),
		cmocka_unit_test(test_complete_partial_udp_zero_becomes_ffff),
		cmocka_unit_test(test_complete_partial_field_outside_linear),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
