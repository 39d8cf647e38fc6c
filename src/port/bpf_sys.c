#include "port/bpf_sys.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long bpf_sys(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int bpf_socket_filter_load(const struct bpf_insn *insns, unsigned n)
{
	static const char license[] = "GPL";
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = n;
	a.license = (uintptr_t)license;
	int fd = (int)bpf_sys(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}
