"""Jars from Maven Central, fetched once with Maven into a git-ignored cache inside the repo.

Each set of jars lives in ``.cache/jars/<name>/`` with a ``.complete`` stamp that records the
coordinates it was built from; a set whose stamp matches is used as it is, without Maven.
Maven itself keeps its downloads in its usual local repository (``~/.m2``), so refetching a
set on the same machine (a fresh clone, a new version) costs no network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("PYKAFKAD_JAR_CACHE", REPO / ".cache" / "jars"))
STAMP = ".complete"
#: maven-dependency-plugin pinned: Maven 3.8's default (2.8) predates useful options
DEPENDENCY_PLUGIN = "3.6.1"
MAVEN_TIMEOUT_S = 1200
#: Some poms (Spark's) list extra repositories, such as a Maven Central mirror on another host.
#: Without settings of the user's own, every repository is read from Maven Central itself.
SETTINGS = """<settings><mirrors><mirror>
  <id>central-only</id><mirrorOf>*,!central</mirrorOf>
  <url>https://repo.maven.apache.org/maven2</url>
</mirror></mirrors></settings>
"""


class MavenError(RuntimeError):
    pass


class ArtifactNotFound(MavenError):
    """Maven Central does not serve an artifact (``coordinates``: group:artifact:type:version)."""

    def __init__(self, message: str, coordinates: str):
        super().__init__(message)
        self.coordinates = coordinates


#: how Maven 3 reports a missing artifact: first asked, or remembered from an earlier attempt
_NOT_FOUND = re.compile(r"Could not find artifact (\S+)|(\S+) was not found in ")


def _pom(artifacts: list[str], excludes: list[str]) -> str:
    deps = []
    for coord in artifacts:
        group, artifact, version = coord.split(":")
        exclusions = "".join(
            f"<exclusion><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId>"
            "</exclusion>"
            for g, a in (e.split(":") for e in excludes)
        )
        deps.append(
            f"<dependency><groupId>{escape(group)}</groupId>"
            f"<artifactId>{escape(artifact)}</artifactId><version>{escape(version)}</version>"
            f"<exclusions>{exclusions}</exclusions></dependency>"
        )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>pykafkad.compat</groupId>
  <artifactId>jars</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>{''.join(deps)}</dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId>
    <artifactId>maven-dependency-plugin</artifactId>
    <version>{DEPENDENCY_PLUGIN}</version>
  </plugin></plugins></build>
</project>
"""


def fetch(name: str, artifacts: list[str], *, excludes: list[str] = (), quiet: bool = True) -> Path:
    """Returns the directory holding ``artifacts`` ("group:artifact:version") and every
    runtime dependency of theirs, fetching them with Maven when the cache lacks them.
    ``excludes`` ("group:artifact") are left out with their own dependencies."""
    dest = CACHE / name
    wanted = "\n".join([*artifacts, *(f"-{e}" for e in excludes)]) + "\n"
    stamp = dest / STAMP
    if stamp.exists() and stamp.read_text() == wanted:
        return dest
    mvn = shutil.which("mvn")
    if mvn is None:
        raise MavenError("Maven (mvn) is not installed: apt-get install maven")
    tmp_dest = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp_dest, ignore_errors=True)
    tmp_dest.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="pykafkad-mvn-") as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(_pom(list(artifacts), list(excludes)))
        settings = []
        if not (Path.home() / ".m2" / "settings.xml").exists():
            (Path(work) / "settings.xml").write_text(SETTINGS)
            settings = ["-s", str(Path(work) / "settings.xml")]
        cmd = [mvn, "-B", "-f", str(pom), *settings, *(["-q"] if quiet else []),
               "dependency:copy-dependencies", "-DincludeScope=runtime",
               f"-DoutputDirectory={tmp_dest}"]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S)
        if proc.returncode != 0:
            shutil.rmtree(tmp_dest, ignore_errors=True)
            output = proc.stdout + proc.stderr
            tail = "\n".join(output.splitlines()[-30:])
            message = f"mvn failed for {name} ({', '.join(artifacts)}):\n{tail}"
            missing = _NOT_FOUND.search(output)
            if missing:
                raise ArtifactNotFound(message, missing.group(1) or missing.group(2))
            raise MavenError(message)
    shutil.rmtree(dest, ignore_errors=True)
    tmp_dest.rename(dest)
    (dest / STAMP).write_text(wanted)
    return dest


def jars(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.jar"))


def classpath(directory: Path) -> str:
    return os.pathsep.join(str(j) for j in jars(directory))
