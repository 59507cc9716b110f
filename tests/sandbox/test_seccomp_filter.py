"""The seccomp filter itself (seccomp.py), without a sandbox around it: which socketpair() types it lets
through, on this machine's kernel through the docker backend's LOADER, and for every architecture it
knows by running its classic BPF on made-up syscalls."""

from __future__ import annotations

import errno
import platform
import struct
import subprocess
import sys

import pytest
from pycapsule.sandbox.seccomp import ARCHES, LOADER, filter_program

SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET = 1, 2, 5
SOCK_NONBLOCK, SOCK_CLOEXEC = 0o4000, 0o2000000
AF_UNIX = 1
ALLOW, EPERM = 0x7FFF0000, 0x00050000 | errno.EPERM


def test_under_the_filter_a_stream_socketpair_is_made_and_no_other_type() -> None:
    program = filter_program()
    if program is None:
        pytest.skip(f"the filter does not know {platform.machine()}'s syscall numbers")
    job = """
import errno, socket
for name in ("SOCK_STREAM", "SOCK_DGRAM", "SOCK_SEQPACKET"):
    for flags in (0, socket.SOCK_NONBLOCK):
        try:
            socket.socketpair(socket.AF_UNIX, getattr(socket, name) | flags)
            print(name, flags, "made")
        except OSError as error:
            print(name, flags, errno.errorcode[error.errno])
"""
    command = [sys.executable, "-I", "-c", LOADER, program.hex(), sys.executable, "-I", "-c", job]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "SOCK_STREAM 0 made", f"SOCK_STREAM {SOCK_NONBLOCK} made",
        "SOCK_DGRAM 0 EPERM", f"SOCK_DGRAM {SOCK_NONBLOCK} EPERM",
        "SOCK_SEQPACKET 0 EPERM", f"SOCK_SEQPACKET {SOCK_NONBLOCK} EPERM",
    ]


def run_bpf(program: bytes, nr: int, audit_arch: int, args: tuple[int, ...]) -> int:
    """What the kernel would return for one syscall: classic BPF over struct seccomp_data
    (int nr; u32 arch; u64 instruction_pointer; u64 args[6]), little-endian. Only the opcodes a
    seccomp filter needs; anything else is an error here."""
    data = struct.pack("<iIQ6Q", nr, audit_arch, 0, *args, *[0] * (6 - len(args)))
    instructions = [struct.unpack_from("<HBBI", program, offset) for offset in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:  # BPF_ALU | BPF_AND | BPF_K
            accumulator &= k
        elif code in (0x15, 0x35, 0x45):  # BPF_JMP | BPF_JEQ / BPF_JGE / BPF_JSET, BPF_K
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
            pc += jt if taken else jf
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"opcode {code:#x} at {pc - 1}")


@pytest.mark.parametrize("machine", sorted(ARCHES))
def test_the_filter_lets_only_stream_socketpairs_through_on_every_known_architecture(machine: str) -> None:
    arch = ARCHES[machine]
    program = filter_program(machine)
    assert program is not None

    def socketpair(kind: int) -> int:
        return run_bpf(program, arch["socketpair"], arch["audit"], (AF_UNIX, kind, 0, 0))

    assert socketpair(SOCK_STREAM) == ALLOW
    assert socketpair(SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC) == ALLOW
    assert socketpair(SOCK_STREAM | 1 << 32) == ALLOW  # the kernel reads an int: the high half is ignored
    for kind in (SOCK_DGRAM, SOCK_SEQPACKET, SOCK_DGRAM | SOCK_CLOEXEC, SOCK_SEQPACKET | SOCK_NONBLOCK,
                 SOCK_DGRAM | 1 << 32, 0, 3):
        assert socketpair(kind) == EPERM, hex(kind)
    # what was refused or allowed before stays so
    assert run_bpf(program, arch["socket"], arch["audit"], (AF_UNIX, SOCK_STREAM, 0)) == EPERM
    assert run_bpf(program, arch["socket"], arch["audit"], (2, SOCK_STREAM, 0)) == ALLOW  # AF_INET
    assert run_bpf(program, arch["refused"]["keyctl"], arch["audit"], ()) == EPERM
