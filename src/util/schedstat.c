/* schedstat.h: one read of /proc/thread-self/schedstat, "RUN WAIT SLICES". */
#include "util/schedstat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

int schedstat_self(uint64_t *run_ns, uint64_t *wait_ns)
{
	*run_ns = *wait_ns = 0;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[96];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (n <= 0)
		return err ? err : -ENODATA;
	buf[n] = '\0';
	uint64_t run, wait;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64, &run, &wait) != 2)
		return -EINVAL;
	*run_ns = run;
	*wait_ns = wait;
	return 0;
}
