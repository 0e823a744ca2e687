"""Writes a size×size PNG of one colour (#rrggbb) to stdout, with the standard library only."""
import struct
import sys
import zlib

colour, size = sys.argv[1], int(sys.argv[2])
pixel = bytes.fromhex(colour[1:])
raw = b"".join(b"\x00" + pixel * size for _ in range(size))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


sys.stdout.buffer.write(
    b"\x89PNG\r\n\x1a\n"
    + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
    + chunk(b"IDAT", zlib.compress(raw))
    + chunk(b"IEND", b"")
)
