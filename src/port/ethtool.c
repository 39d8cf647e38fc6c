#include "port/ethtool.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int ethtool_ioctl(const char *dev, void *cmd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = cmd;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int ret = ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

int ethtool_driver(const char *dev, char *out, size_t size)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	int ret = ethtool_ioctl(dev, &info);
	if (ret == 0 && size > 0) {
		size_t n = strnlen(info.driver, sizeof(info.driver));
		n = n < size - 1 ? n : size - 1;
		memcpy(out, info.driver, n);
		out[n] = 0;
	}
	return ret;
}

int ethtool_tx_csum(const char *dev)
{
	struct ethtool_value v = { .cmd = ETHTOOL_GTXCSUM };
	int ret = ethtool_ioctl(dev, &v);
	return ret < 0 ? ret : v.data != 0;
}

int ethtool_tso(const char *dev)
{
	struct ethtool_value v = { .cmd = ETHTOOL_GTSO };
	int ret = ethtool_ioctl(dev, &v);
	return ret < 0 ? ret : v.data != 0;
}

bool ethtool_leaves_csum_unfinished(const char *dev)
{
	char driver[32];
	return ethtool_driver(dev, driver, sizeof(driver)) == 0 && strcmp(driver, "veth") == 0 &&
	       ethtool_tx_csum(dev) == 1;
}
