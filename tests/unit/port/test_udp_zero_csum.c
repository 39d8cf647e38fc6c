/* Unit tests for src/port/udp_zero_csum.c: datagrams sent over loopback
 * with and without a UDP checksum (SO_NO_CHECK makes the kernel send a zero
 * one), and the count the receiving socket's filter keeps.  Without
 * CAP_BPF/CAP_SYS_ADMIN the kernel refuses the filter: then the tests check
 * only that the refusal leaves a socket that works, uncounted. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "port/udp_zero_csum.h"

static int udp_bound(struct sockaddr_in *sin)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	*sin = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(fd, (struct sockaddr *)sin, sizeof(*sin)), 0);
	socklen_t len = sizeof(*sin);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	return fd;
}

static void send_n(const struct sockaddr_in *to, unsigned n, bool zero_csum)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int one = 1;
	assert_true(fd >= 0);
	if (zero_csum)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)), 0);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(sendto(fd, "vxlan-ish", 9, 0, (const struct sockaddr *)to, sizeof(*to)), 9);
	close(fd);
}

static unsigned drain(int fd)
{
	char buf[64];
	unsigned n = 0;
	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) == 9)
		n++;
	return n;
}

static void test_counts_zero_checksums_only(void **state)
{
	(void)state;
	struct sockaddr_in sin;
	int fd = udp_bound(&sin);
	struct udp_zero_csum zc;
	int err = udp_zero_csum_attach(fd, &zc);
	if (err < 0) {
		assert_true(err == -EPERM || err == -EACCES || err == -EINVAL);
		assert_false(udp_zero_csum_counting(&zc));
		assert_int_equal(udp_zero_csum_read(&zc), 0);
		send_n(&sin, 2, true);
		assert_int_equal(drain(fd), 2);
		close(fd);
		skip();
	}
	assert_true(udp_zero_csum_counting(&zc));
	assert_int_equal(udp_zero_csum_read(&zc), 0);
	send_n(&sin, 5, true);
	send_n(&sin, 3, false);
	/* Every datagram kept whole, and only the zero-checksum ones counted. */
	assert_int_equal(drain(fd), 8);
	assert_int_equal(udp_zero_csum_read(&zc), 5);
	send_n(&sin, 4, false);
	assert_int_equal(drain(fd), 4);
	assert_int_equal(udp_zero_csum_read(&zc), 5);
	udp_zero_csum_close(&zc);
	assert_false(udp_zero_csum_counting(&zc));
	/* The filter stays with the socket, and keeps datagrams whole. */
	send_n(&sin, 2, true);
	assert_int_equal(drain(fd), 2);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_zero_checksums_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
