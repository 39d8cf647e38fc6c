/* Unit tests for src/port/frame.c: the virtio_net_hdr framing and counters
 * that tap and afpacket ports share.  Pure: no device. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "packet/vnet_hdr.h"
#include "port/frame.h"

static struct pkt_pool *pool;

static int setup(void **state)
{
	(void)state;
	return pkt_pool_create(8, &pool);
}

static int teardown(void **state)
{
	(void)state;
	pkt_pool_destroy(pool);
	return 0;
}

static void test_tx_iov_lays_out_header_linear_part_and_frags(void **state)
{
	(void)state;
	struct pkt *pkt = pkt_alloc(pool);
	static const uint8_t frag_a[300] = { 1 }, frag_b[7] = { 2 };
	memset(pkt->data, 0xab, 100);
	pkt->size = 100;
	pkt->frags[0] = (struct pkt_frag){ frag_a, sizeof(frag_a), NULL };
	pkt->frags[1] = (struct pkt_frag){ frag_b, sizeof(frag_b), NULL };
	pkt->nr_frags = 2;
	pkt->frags_size = sizeof(frag_a) + sizeof(frag_b);
	pkt->ol = (struct pkt_offload){ .flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_TCPV4, .gso_size = 1448,
					.csum_start = 34, .csum_offset = 16 };
	uint8_t hdr[VNET_HDR_V1_LEN];
	struct iovec iov[FRAME_TX_IOV_MAX];
	for (size_t hs = VNET_HDR_LEN; hs <= VNET_HDR_V1_LEN; hs += 2) {
		assert_int_equal(frame_tx_iov(pkt, hdr, hs, iov), 4);
		assert_ptr_equal(iov[0].iov_base, hdr);
		assert_int_equal(iov[0].iov_len, hs);
		assert_ptr_equal(iov[1].iov_base, pkt->data);
		assert_int_equal(iov[1].iov_len, 100);
		assert_ptr_equal(iov[2].iov_base, frag_a);
		assert_int_equal(iov[3].iov_len, sizeof(frag_b));
		/* the header is the writer's, read back it is the pkt's metadata */
		struct pkt_offload back;
		assert_int_equal(vnet_hdr_read(hdr, hs, hs, &back), DROP_NONE);
		assert_int_equal(back.gso_type, PKT_GSO_TCPV4);
		assert_int_equal(back.gso_size, 1448);
		assert_int_equal(back.csum_start, 34);
		assert_int_equal(back.csum_offset, 16);
	}
	pkt->nr_frags = 0;
	pkt->frags_size = 0;
	pkt_free(pkt);
}

static void test_rx_accept_reads_header_and_counts(void **state)
{
	(void)state;
	struct port port = { .id = 7 };
	struct port_io io = { 0 };
	struct frame_io_stats fs = { 0 };
	struct pkt *pkt = pkt_alloc(pool);
	uint8_t hdr[VNET_HDR_V1_LEN];
	struct pkt_offload ol = { .flags = PKT_OL_NEEDS_CSUM, .gso_type = PKT_GSO_TCPV6, .gso_size = 1400 };
	vnet_hdr_write(&ol, hdr, sizeof(hdr));
	assert_true(frame_rx_accept(&port, &io, &fs, pkt, hdr, sizeof(hdr) + 65000, sizeof(hdr)));
	assert_int_equal(pkt->size, 65000);
	assert_int_equal(pkt->in_port, 7);
	assert_int_equal(pkt->ol.gso_type, PKT_GSO_TCPV6);
	assert_int_equal(io.stats.rx_frames, 1);
	assert_int_equal(io.stats.rx_bytes, 65000);
	assert_int_equal(fs.rx_gso_frames, 1);
	assert_int_equal(fs.rx_partial_csum, 1);

	/* a plain frame: counted, no GSO */
	ol = (struct pkt_offload){ 0 };
	vnet_hdr_write(&ol, hdr, VNET_HDR_LEN);
	assert_true(frame_rx_accept(&port, &io, &fs, pkt, hdr, VNET_HDR_LEN + 60, VNET_HDR_LEN));
	assert_int_equal(pkt->size, 60);
	assert_int_equal(fs.rx_gso_frames, 1);
	assert_int_equal(io.stats.rx_frames, 2);

	/* shorter than the header: refused and counted as such */
	assert_false(frame_rx_accept(&port, &io, &fs, pkt, hdr, VNET_HDR_V1_LEN - 1, VNET_HDR_V1_LEN));
	assert_int_equal(io.stats.drops[DROP_VNET_HDR_TRUNCATED], 1);
	assert_int_equal(io.stats.rx_frames, 2);
	pkt_free(pkt);
}

static void test_tx_count_sent_and_refused(void **state)
{
	(void)state;
	struct port_io io = { 0 };
	struct frame_io_stats fs = { 0 };
	struct pkt *pkt = pkt_alloc(pool);
	pkt->size = 60000;
	pkt->ol.gso_type = PKT_GSO_TCPV4;
	frame_tx_count(&io, &fs, pkt, 0);
	assert_int_equal(io.stats.tx_frames, 1);
	assert_int_equal(io.stats.tx_bytes, 60000);
	assert_int_equal(io.stats.tx_hist_frames[port_hist_bucket(60000)], 1);
	assert_int_equal(fs.tx_gso_frames, 1);
	frame_tx_count(&io, &fs, pkt, 90 /* EMSGSIZE */);
	assert_int_equal(io.stats.tx_frames, 1);
	assert_int_equal(fs.tx_errors, 1);
	assert_int_equal(fs.last_tx_errno, 90);
	assert_int_equal(io.stats.drops[DROP_TX_ERROR], 1);
	pkt_free(pkt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tx_iov_lays_out_header_linear_part_and_frags),
		cmocka_unit_test(test_rx_accept_reads_header_and_counts),
		cmocka_unit_test(test_tx_count_sent_and_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
