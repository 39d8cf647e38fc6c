/* Unit tests for src/packet/vnet_hdr.c: the byte layout of read and write
 * (10 and 12 bytes).  vnet_hdr_validate() against parsed frames is tested in
 * tests/unit/parse/test_vnet_hdr_check.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "packet/pkt.h"
#include "packet/vnet_hdr.h"

/* ---- read and write ------------------------------------------------------ */

static void test_read_known_bytes(void **state)
{
	(void)state;
	/* NEEDS_CSUM, TCPV4|ECN, hdr_len 54, gso_size 1448, csum_start 34,
	 * csum_offset 16, all little-endian. */
	const uint8_t hdr[12] = { 0x01, 0x81, 0x36, 0x00, 0xa8, 0x05, 0x22, 0x00, 0x10, 0x00, 0x07, 0x00 };
	struct pkt_offload ol;
	assert_int_equal(vnet_hdr_read(hdr, sizeof(hdr), VNET_HDR_LEN, &ol), DROP_NONE);
	assert_int_equal(ol.flags, PKT_OL_NEEDS_CSUM);
	assert_int_equal(ol.gso_type, PKT_GSO_TCPV4 | PKT_GSO_ECN);
	assert_int_equal(ol.hdr_len, 54);
	assert_int_equal(ol.gso_size, 1448);
	assert_int_equal(ol.csum_start, 34);
	assert_int_equal(ol.csum_offset, 16);

	struct pkt_offload ol12;
	assert_int_equal(vnet_hdr_read(hdr, sizeof(hdr), VNET_HDR_V1_LEN, &ol12), DROP_NONE);
	assert_memory_equal(&ol, &ol12, sizeof(ol));
}

static void test_read_truncated(void **state)
{
	(void)state;
	const uint8_t hdr[12] = { 0 };
	struct pkt_offload ol;
	assert_int_equal(vnet_hdr_read(hdr, 9, VNET_HDR_LEN, &ol), DROP_VNET_HDR_TRUNCATED);
	assert_int_equal(vnet_hdr_read(hdr, 11, VNET_HDR_V1_LEN, &ol), DROP_VNET_HDR_TRUNCATED);
	assert_int_equal(vnet_hdr_read(hdr, 0, VNET_HDR_LEN, &ol), DROP_VNET_HDR_TRUNCATED);
	assert_int_equal(vnet_hdr_read(hdr, 12, 8, &ol), DROP_VNET_HDR_TRUNCATED);
	assert_int_equal(vnet_hdr_read(hdr, 10, VNET_HDR_LEN, &ol), DROP_NONE);
	assert_int_equal(vnet_hdr_read(hdr, 12, VNET_HDR_V1_LEN, &ol), DROP_NONE);
}

static void test_write_then_read_round_trip(void **state)
{
	(void)state;
	const struct pkt_offload ol = {
		.flags = PKT_OL_NEEDS_CSUM | PKT_OL_DATA_VALID,
		.gso_type = PKT_GSO_UDP_L4,
		.hdr_len = 0x1234,
		.gso_size = 0xfedc,
		.csum_start = 0x0102,
		.csum_offset = 0x8006,
	};
	uint8_t buf[12];
	memset(buf, 0xaa, sizeof(buf));
	vnet_hdr_write(&ol, buf, VNET_HDR_LEN);
	assert_int_equal(buf[10], 0xaa); /* nothing written past 10 bytes */
	assert_int_equal(buf[2], 0x34);  /* little-endian on the wire */
	assert_int_equal(buf[3], 0x12);
	struct pkt_offload back;
	assert_int_equal(vnet_hdr_read(buf, VNET_HDR_LEN, VNET_HDR_LEN, &back), DROP_NONE);
	assert_memory_equal(&ol, &back, sizeof(ol));

	vnet_hdr_write(&ol, buf, VNET_HDR_V1_LEN);
	assert_int_equal(buf[10], 1); /* num_buffers = 1 */
	assert_int_equal(buf[11], 0);
	assert_int_equal(vnet_hdr_read(buf, sizeof(buf), VNET_HDR_V1_LEN, &back), DROP_NONE);
	assert_memory_equal(&ol, &back, sizeof(ol));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_known_bytes),
		cmocka_unit_test(test_read_truncated),
		cmocka_unit_test(test_write_then_read_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
