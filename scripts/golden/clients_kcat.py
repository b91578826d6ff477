"""kcat's scenarios: librdkafka again, but through its command line, which sends requests the
library's own API calls do not (e.g. a ListOffsets by timestamp from ``-Q``)."""

from __future__ import annotations

import subprocess

from .common import (
    BASE_TS,
    CODECS,
    KCAT,
    WAIT_S,
    ClientDriver,
    codec_topic,
    record_key,
    records_for,
    step,
)


class Kcat(ClientDriver):
    name = "kcat"

    def run(self, *args: str, stdin: bytes | None = None) -> str:
        cmd = [KCAT, "-b", self.bootstrap, "-X", f"client.id={self.name}", *args]
        out = subprocess.run(cmd, input=stdin, capture_output=True, timeout=WAIT_S, check=True)
        return out.stdout.decode()

    def admin(self) -> None:
        step("kcat Metadata", lambda: self.run("-L"))
        step("kcat ListOffsets timestamp",
             lambda: self.run("-Q", "-t", f"{codec_topic('none')}:0:{BASE_TS + 1}"))

    def produce(self) -> None:
        for codec in CODECS:
            lines = b"".join(
                key + b":" + value + b"\n" for key, value, _h, _ts in records_for(self.name, codec))
            z = [] if codec == "none" else ["-z", codec]
            step(f"kcat Produce {codec}", lambda codec=codec, z=z, lines=lines: self.run(
                "-P", "-t", codec_topic(codec), "-K:", "-H", "h=1", *z, stdin=lines))

    def consume(self) -> None:
        for codec in CODECS:
            step(f"kcat Fetch {codec}", lambda codec=codec: self.run(
                "-C", "-t", codec_topic(codec), "-o", "beginning", "-e", "-f", "%k %o\n"))
        step("kcat ListOffsets latest", lambda: self.run(
            "-C", "-t", codec_topic("none"), "-o", "-1", "-e"))

    def groups(self) -> None:
        self.run("-G", "golden-kcat", codec_topic("none"), "-e",
                 "-X", "auto.offset.reset=earliest", "-X", "enable.auto.commit=true")

    def read_committed(self) -> None:
        self.run("-C", "-t", codec_topic("none"), "-o", "beginning", "-e",
                 "-X", "isolation.level=read_committed")

    def transactions(self) -> None:
        self.run("-P", "-t", codec_topic("none"), "-K:", "-X", "transactional.id=golden-kcat-txn",
                 stdin=record_key(self.name, "none", 100) + b":t\n")
