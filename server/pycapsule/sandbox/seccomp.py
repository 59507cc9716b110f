"""A small seccomp filter for the bwrap sandbox (bwrap --seccomp FD), written as classic BPF.

It refuses what a doctest never needs and what widens the kernel's attack surface: new user
namespaces (unshare/clone with CLONE_NEWUSER; clone3 gets ENOSYS so libc falls back to clone,
whose flags can be checked), the kernel keyring, bpf, perf events, userfaultfd and io_uring.
Docker's default profile already covers these for the docker backend.

It also refuses the sockets that reach past the sandbox's own network namespace: `socket()` for
AF_UNIX (a read-only bind does not stop connect() to a socket file, e.g. the Docker API's),
AF_NETLINK, AF_PACKET and AF_VSOCK. `socketpair()`, the other way to hold a unix socket, is allowed
only for SOCK_STREAM (the type masked with 0xf, so SOCK_NONBLOCK and SOCK_CLOEXEC do not matter):
what asyncio and multiprocessing use. A stream pair is connected for good: connect() on it fails
(EISCONN, or EPROTOTYPE for a socket file of another type), and so does sendto()/sendmsg() with an
address (EISCONN), so it reaches no socket file. A SOCK_DGRAM pair would (sendto(path), or connect(path)
then send(): the kernel delivers to any socket file the job's uid may write, read-only bind or not),
and SOCK_SEQPACKET is refused with it: the kernel ignores its address today, but nothing needs it.
The docker backend installs this same filter at the worker's start (`LOADER`), on top of Docker's own
profile.

With `refuse_sysv_queues_and_shm` (bwrap under the memory watchdog, where no cgroup counts them), it
refuses SysV shared memory and message queues too: their memory belongs to no process, so sampling
processes cannot see it (POSIX shared memory lives in the capped /dev/shm and stays usable).
"""

from __future__ import annotations

import errno
import platform
import struct

# seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]
NR_OFFSET, ARCH_OFFSET, ARG0_OFFSET, ARG1_OFFSET = 0, 4, 16, 24  # an arg's low 32 bits (little-endian)
LD_W_ABS, ALU_AND_K, JEQ, JGE, JSET, RET = 0x20, 0x54, 0x15, 0x35, 0x45, 0x06
RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
CLONE_NEWUSER = 0x10000000
REFUSED_SOCKET_FAMILIES = {"AF_UNIX": 1, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_VSOCK": 40}
SOCK_TYPE_MASK, SOCK_STREAM = 0xF, 1  # the only socketpair() type allowed
X32_SYSCALL_BIT = 0x40000000

ARCHES = {
    "x86_64": {
        "audit": 0xC000003E, "unshare": 272, "clone": 56, "clone3": 435, "socket": 41,
        "socketpair": 53,
        "sysv": {"shmget": 29, "msgget": 68},
        "refused": {"keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321,
                    "perf_event_open": 298, "userfaultfd": 323,
                    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427},
    },
    "aarch64": {
        "audit": 0xC00000B7, "unshare": 97, "clone": 220, "clone3": 435, "socket": 198,
        "socketpair": 199,
        "sysv": {"shmget": 194, "msgget": 186},
        "refused": {"keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280,
                    "perf_event_open": 241, "userfaultfd": 282,
                    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427},
    },
}


class Assembler:
    """Classic BPF with forward labels (jump offsets are relative and at most 255)."""

    def __init__(self) -> None:
        self.code: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def op(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.code.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.code)

    def assemble(self) -> bytes:
        out = bytearray()
        for index, (code, jt, jf, k) in enumerate(self.code):
            offsets = [self.labels[j] - index - 1 if isinstance(j, str) else j for j in (jt, jf)]
            out += struct.pack("<HBBI", code, offsets[0], offsets[1], k)
        return bytes(out)


def filter_program(machine: str | None = None, *, refuse_sysv_queues_and_shm: bool = False) -> bytes | None:
    """The filter for this machine's architecture, or None where we do not know its syscall numbers."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    bpf = Assembler()
    bpf.op(LD_W_ABS, ARCH_OFFSET)
    bpf.op(JEQ, arch["audit"], 1, 0)
    bpf.op(RET, RET_KILL_PROCESS)  # another ABI (e.g. i386 on x86_64): nothing legitimate uses it here
    bpf.op(LD_W_ABS, NR_OFFSET)
    if arch is ARCHES["x86_64"]:
        bpf.op(JGE, X32_SYSCALL_BIT, "eperm", 0)
    bpf.op(JEQ, arch["unshare"], "flags", 0)
    bpf.op(JEQ, arch["clone"], "flags", 0)
    bpf.op(JEQ, arch["clone3"], "enosys", 0)
    bpf.op(JEQ, arch["socket"], "family", 0)
    bpf.op(JEQ, arch["socketpair"], "pair_type", 0)
    refused = [*arch["refused"].values(), *(arch["sysv"].values() if refuse_sysv_queues_and_shm else ())]
    for number in refused:
        bpf.op(JEQ, number, "eperm", 0)
    bpf.op(RET, RET_ALLOW)
    bpf.label("flags")
    bpf.op(LD_W_ABS, ARG0_OFFSET)
    bpf.op(JSET, CLONE_NEWUSER, "eperm", 0)
    bpf.op(RET, RET_ALLOW)
    bpf.label("family")
    bpf.op(LD_W_ABS, ARG0_OFFSET)
    for family in REFUSED_SOCKET_FAMILIES.values():
        bpf.op(JEQ, family, "eperm", 0)
    bpf.op(RET, RET_ALLOW)
    bpf.label("pair_type")
    bpf.op(LD_W_ABS, ARG1_OFFSET)
    bpf.op(ALU_AND_K, SOCK_TYPE_MASK)
    bpf.op(JEQ, SOCK_STREAM, 0, "eperm")
    bpf.op(RET, RET_ALLOW)
    bpf.label("enosys")
    bpf.op(RET, RET_ERRNO | errno.ENOSYS)
    bpf.label("eperm")
    bpf.op(RET, RET_ERRNO | errno.EPERM)
    return bpf.assemble()


# Run as `python3 -I -c LOADER HEX_FILTER PYTHON ARGS...`: installs the filter (no-new-privs first,
# so no privilege is needed), then execs the real command, which inherits the filter for good.
LOADER = (  # one line: it shows in the sandbox's process list
    "import ctypes,os,sys;"
    "p=bytes.fromhex(sys.argv[1]);libc=ctypes.CDLL(None,use_errno=True);"
    "F=type('F',(ctypes.Structure,),{'_fields_':[('len',ctypes.c_ushort),('filter',ctypes.c_char_p)]});"
    "f=F(len(p)//8,p);"
    "(libc.prctl(38,1,0,0,0)==0 and libc.prctl(22,2,ctypes.byref(f),0,0)==0) or sys.exit("
    "'pycapsule: the seccomp filter could not be installed: '+os.strerror(ctypes.get_errno()));"
    "os.execv(sys.argv[2],sys.argv[2:])"
)
