"""Write the AF_XDP frame layer's fuzz seed corpus (tests/fuzz/corpus/frame): each seed a
control octet (fuzz_frame.c: the MTU, the frame's size, whether the IPv4 header checksum is
left as it comes) and a frame. The queries tests/frames.py builds (IPv4 and IPv6, VLAN tags,
IPv4 options) at each MTU; every seed of the request handler's (tests/fuzz/corpus/respond)
carried in a frame; and the frames not answered, the malformed kinds among them. Run it again after
changing the list; the files are named by content, so reruns are stable."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from frames import ANSWERED, NOT_ANSWERED, ROOM, frame4, frame6  # noqa: E402

CORPUS = HERE / "corpus" / "frame"
RESPOND = HERE / "corpus" / "respond"
# The control octet: bits 0-1 the MTU (1500, 576, 1280, 9000), bit 2 a 4096-octet frame,
# bit 3 the IPv4 header checksum as it comes, bit 4 the lengths made the frame's.
MTU_576, MTU_1280, MTU_9000, LARGE_FRAME, AS_IT_COMES, FIT = 1, 2, 3, 4, 8, 16


def seeds() -> list[bytes]:
    out = []
    for frame, _ in ANSWERED.values():
        out += [bytes([control]) + frame
                for control in (0, MTU_576 | FIT, MTU_1280, MTU_9000 | LARGE_FRAME | FIT)]
    # As built: those with a wrong checksum keep it.
    out += [bytes([AS_IT_COMES]) + frame for frame, _ in NOT_ANSWERED.values()
            if len(frame) <= ROOM]
    # The handler's seeds, over IPv4 and IPv6 in turn, at each MTU, most to be fitted.
    for i, path in enumerate(sorted(RESPOND.iterdir())):
        make = frame6 if i % 2 else frame4
        out.append(bytes([i // 2 % 4 | (FIT if i % 3 else 0)]) + make(path.read_bytes()))
    return out


def main() -> None:
    CORPUS.mkdir(exist_ok=True)
    for seed in seeds():
        (CORPUS / hashlib.sha1(seed).hexdigest()).write_bytes(seed)


if __name__ == "__main__":
    main()
