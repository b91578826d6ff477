"""Compression codecs of record batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.

The broker stores what producers send, so it decompresses only when Kafka semantics need the
records (compaction, LogAppendTime conversions, the coordinators' own topics). Decompression is
therefore bounded by a caller-given size: a few compressed bytes must never make the broker
allocate gigabytes. Compression writes what the Java client writes, so that every client can read
batches the broker builds itself:

* gzip: one gzip member at zlib's default level (Java's GZIPOutputStream).
* snappy: xerial framing (magic, version 1, compat 1, then 32 KiB blocks each as int32 length +
  raw snappy), as Java and kafka-python write it. Reading accepts that and raw snappy, which
  librdkafka writes.
* lz4: the LZ4 frame format with independent 64 KiB blocks; Java's reader refuses linked blocks.
* zstd: standard frames (reading also accepts frames without a content size, and several frames).
"""

from __future__ import annotations

import struct
import zlib

import cramjam
import lz4.frame
import zstandard

from wire.errors import ErrorCode
from wire.records.errors import InvalidRecordError, corrupt

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

#: Default ceiling on one batch's decompressed records.
DEFAULT_MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024

XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK_SIZE = 32 * 1024
_I32 = struct.Struct(">i")

# zstd can expand one input byte to at most ~32 KiB of output (a 4-byte RLE block yields a
# 128 KiB block), so feeding budget >> 15 input bytes at a time keeps each step within budget.
_ZSTD_EXPANSION_SHIFT = 15

#: the most output one lz4 decompression step asks for (see _unlz4)
_LZ4_STEP = 1 << 20

# zstandard's (de)compressor objects hold one native context each and are not thread safe, so
# each call makes its own (a few microseconds): batches may be decoded in worker threads.
_ZSTD_LEVEL = 3


def unsupported(codec: int) -> InvalidRecordError:
    return InvalidRecordError(
        ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, f"unknown compression codec {codec}"
    )


class DecompressedTooLarge(InvalidRecordError):
    """Decompression stopped past ``max_size``; ``prefix`` holds what it produced until then
    (at most about one step more than ``max_size``), so a caller can judge the records it
    starts with without decompressing the rest."""

    def __init__(self, max_size: int, prefix: bytes = b""):
        # MESSAGE_TOO_LARGE (not CORRUPT_MESSAGE, which Java's producer retries forever): the
        # Java producer answers it by splitting the batch.
        super().__init__(
            ErrorCode.MESSAGE_TOO_LARGE, f"records decompress to more than {max_size} bytes"
        )
        self.prefix = prefix


def _too_large(max_size: int, out: list[bytes] | None = None) -> DecompressedTooLarge:
    return DecompressedTooLarge(max_size, b"".join(out) if out else b"")


# -- compress ---------------------------------------------------------------------------------


def compress(codec: int, data: bytes | bytearray | memoryview, level: int | None = None) -> bytes:
    """Compresses a batch's records section the way the Java client does; ``level`` is the
    topic's ``compression.<codec>.level`` (None: Kafka's default; -1 is gzip's default)."""
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        c = zlib.compressobj(6 if level is None or level < 0 else level, zlib.DEFLATED,
                             16 + zlib.MAX_WBITS)
        return c.compress(data) + c.flush()
    if codec == SNAPPY:
        return _xerial_compress(memoryview(data))
    if codec == LZ4:
        return lz4.frame.compress(
            data,
            compression_level=0 if level is None else level,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            store_size=False,
        )
    if codec == ZSTD:
        return zstandard.ZstdCompressor(level=_ZSTD_LEVEL if level is None else level).compress(data)
    raise unsupported(codec)


def _xerial_compress(data: memoryview) -> bytes:
    out = [_XERIAL_HEADER]
    for i in range(0, len(data), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(data[i : i + _XERIAL_BLOCK_SIZE]))
        out.append(_I32.pack(len(block)))
        out.append(block)
    return b"".join(out)


# -- decompress -------------------------------------------------------------------------------


def decompress(
    codec: int,
    data: bytes | bytearray | memoryview,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> bytes:
    """Decompresses a records section; never produces (or allocates much) more than ``max_size``.

    Raises InvalidRecordError: UNSUPPORTED_COMPRESSION_TYPE for an unknown codec, MESSAGE_TOO_LARGE
    past ``max_size``, CORRUPT_MESSAGE for anything the codec cannot decode.
    """
    if codec == NONE:
        if len(data) > max_size:
            raise _too_large(max_size)
        return bytes(data)
    if codec == GZIP:
        fn = _gunzip
    elif codec == SNAPPY:
        fn = _unsnappy
    elif codec == LZ4:
        fn = _unlz4
    elif codec == ZSTD:
        fn = _unzstd
    else:
        raise unsupported(codec)
    try:
        return fn(memoryview(data), max_size)
    except InvalidRecordError:
        raise
    except Exception as e:  # each library has its own error types; all mean "corrupt"
        raise corrupt(f"{CODEC_NAMES[codec]} decompression failed: {e}") from None


def _gunzip(data: memoryview, max_size: int) -> bytes:
    """Gzip, including several concatenated members (Java's GZIPInputStream reads them all)."""
    out: list[bytes] = []
    total = 0
    rest: bytes | memoryview = data
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while True:
            piece = d.decompress(pending, max_size - total + 1)
            total += len(piece)
            out.append(piece)
            if total > max_size:
                raise _too_large(max_size, out)
            if d.eof:
                break
            pending = d.unconsumed_tail
            if not pending:
                raise corrupt("gzip stream is truncated")
        rest = d.unused_data
        if not rest:
            return b"".join(out)


def _unsnappy(data: memoryview, max_size: int) -> bytes:
    if len(data) >= len(_XERIAL_HEADER) and data[: len(XERIAL_MAGIC)] == XERIAL_MAGIC:
        return _unxerial(data, max_size)
    return _raw_snappy(data, max_size)


def _raw_snappy(block: memoryview, budget: int) -> bytes:
    # Raw snappy starts with the uncompressed length: check it before allocating anything.
    if cramjam.snappy.decompress_raw_len(block) > budget:
        raise _too_large(budget)
    return bytes(cramjam.snappy.decompress_raw(block))


def _unxerial(data: memoryview, max_size: int) -> bytes:
    """Xerial blocks; a repeated stream header (concatenated streams) is skipped as xerial does."""
    out: list[bytes] = []
    total = 0
    pos = len(_XERIAL_HEADER)
    end = len(data)
    while pos < end:
        if data[pos : pos + len(XERIAL_MAGIC)] == XERIAL_MAGIC:
            pos += len(_XERIAL_HEADER)
            continue
        if end - pos < 4:
            raise corrupt("truncated xerial snappy block length")
        (n,) = _I32.unpack_from(data, pos)
        pos += 4
        if n < 0 or n > end - pos:
            raise corrupt(f"xerial snappy block of {n} bytes with {end - pos} left")
        try:
            piece = _raw_snappy(data[pos : pos + n], max_size - total)
        except DecompressedTooLarge:
            raise _too_large(max_size, out) from None
        pos += n
        total += len(piece)
        out.append(piece)
        if total > max_size:
            raise _too_large(max_size, out)
    return b"".join(out)


def _unlz4(data: memoryview, max_size: int) -> bytes:
    """One or more LZ4 frames, read ``max_size + 1`` bytes at most, in steps of at most
    ``_LZ4_STEP`` bytes: lz4 allocates a step's whole output buffer up front, and one of
    ``max_size`` (64 MiB) costs several times the decompression of a typical batch."""
    out: list[bytes] = []
    total = 0
    rest: bytes | memoryview = data
    while True:
        d = lz4.frame.LZ4FrameDecompressor()
        pending = rest
        while True:
            piece = d.decompress(pending, max_length=min(max_size - total + 1, _LZ4_STEP))
            total += len(piece)
            out.append(piece)
            if total > max_size:
                raise _too_large(max_size, out)
            if d.eof:
                break
            if d.needs_input:
                raise corrupt("lz4 frame is truncated")
            pending = b""
        rest = d.unused_data or b""
        if not rest:
            return b"".join(out)


def _unzstd(data: memoryview, max_size: int) -> bytes:
    """Zstd frames, streamed so that frames without a content size work and stay bounded."""
    out: list[bytes] = []
    total = 0
    pos = 0
    end = len(data)
    if end == 0:
        raise corrupt("empty zstd stream")
    dctx = zstandard.ZstdDecompressor()
    while pos < end:
        d = dctx.decompressobj()
        while True:
            step = max(64, (max_size - total) >> _ZSTD_EXPANSION_SHIFT)
            chunk = data[pos : pos + step]
            if not chunk:
                raise corrupt("zstd frame is truncated")
            pos += len(chunk)
            piece = d.decompress(chunk)
            total += len(piece)
            out.append(piece)
            if total > max_size:
                raise _too_large(max_size, out)
            if d.eof:
                pos -= len(d.unused_data)
                break
    return b"".join(out)
