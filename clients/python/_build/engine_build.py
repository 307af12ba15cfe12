"""A PEP 517 build backend in the standard library only, so that
``pip install ./clients/python`` needs no download: pip's build isolation
installs a project's build requirements from an index, and this project
requires none.

It builds a pure-Python wheel of the ``engine_memory`` package (its ``.py``
files and ``py.typed``), an editable wheel (a ``.pth`` pointing at this
directory) and an sdist, with the metadata of pyproject.toml's
``[project]`` table.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from typing import Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "engine_memory"
# Every file's time in what is built, so that a build is reproducible.
EPOCH = (1980, 1, 1, 0, 0, 0)

__all__ = ["build_wheel", "build_sdist", "build_editable", "prepare_metadata_for_build_wheel",
           "prepare_metadata_for_build_editable", "get_requires_for_build_wheel",
           "get_requires_for_build_sdist", "get_requires_for_build_editable"]


def _project() -> Dict[str, str]:
    """The string fields of pyproject.toml's [project] table (the table is
    written with one ``key = "value"`` a line, which is what is read)."""
    fields: Dict[str, str] = {}
    section = ""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            m = re.fullmatch(r"\[([^\]]+)\]", line)
            if m:
                section = m.group(1)
                continue
            if section != "project" or not line or line.startswith("#"):
                continue
            m = re.fullmatch(r'(name|version|description|readme|requires-python)\s*=\s*"([^"\\]*)"', line)
            if m:
                fields[m.group(1)] = m.group(2)
                continue
            m = re.fullmatch(r'license\s*=\s*\{\s*text\s*=\s*"([^"\\]*)"\s*\}', line)
            if m:
                fields["license"] = m.group(1)
                continue
            if re.fullmatch(r"dependencies\s*=\s*\[\s*\]", line):
                continue
            # Anything else would be left out of the metadata unsaid.
            raise ValueError(f"pyproject.toml: [project] line {line!r}: engine_build reads only name, version, "
                             "description, readme, requires-python, license = {text = ...} and dependencies = []")
    for k in ("name", "version"):
        if k not in fields:
            raise ValueError(f"pyproject.toml: [project] has no {k}")
    return fields


def _dist_name(p: Dict[str, str]) -> str:
    return re.sub(r"[-_.]+", "_", p["name"]).lower() + "-" + p["version"]


def _metadata(p: Dict[str, str]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    if "license" in p:
        lines.append(f"License: {p['license']}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    body = ""
    if "readme" in p:
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, p["readme"]), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _package_files() -> List[Tuple[str, str]]:
    """(path in the wheel, path on disk) of the package's files."""
    out = []
    src = os.path.join(ROOT, PACKAGE)
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") or name == "py.typed":
            out.append((f"{PACKAGE}/{name}", os.path.join(src, name)))
    return out


def _write_wheel(directory: str, files: List[Tuple[str, bytes]]) -> str:
    p = _project()
    dist = _dist_name(p)
    info = f"{dist}.dist-info"
    files = files + [
        (f"{info}/METADATA", _metadata(p).encode()),
        (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: engine_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
    ]
    record = []
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    return wheel


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    files = []
    for name, path in _package_files():
        with open(path, "rb") as f:
            files.append((name, f.read()))
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory: str, config_settings: Optional[dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    # A .pth line puts this directory on sys.path: edits to the package
    # take effect without a reinstall.
    return _write_wheel(wheel_directory, [(f"__editable__.{PACKAGE}.pth", (ROOT + "\n").encode())])


def _write_metadata(metadata_directory: str) -> str:
    p = _project()
    info = f"{_dist_name(p)}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    with open(os.path.join(metadata_directory, info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    return info


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    return _write_metadata(metadata_directory)


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    return _write_metadata(metadata_directory)


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    p = _project()
    dist = _dist_name(p)
    paths = ["pyproject.toml", "README.md", "_build/engine_build.py"]
    paths += [os.path.relpath(disk, ROOT) for _, disk in _package_files()]
    sdist = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, sdist), "w:gz", format=tarfile.PAX_FORMAT) as t:
        def add(name: str, data: bytes) -> None:
            ti = tarfile.TarInfo(f"{dist}/{name}")
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 315532800
            t.addfile(ti, io.BytesIO(data))
        for rel in paths:
            with open(os.path.join(ROOT, rel), "rb") as f:
                add(rel, f.read())
        add("PKG-INFO", _metadata(p).encode())
    return sdist


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[dict] = None) -> List[str]:
    return []
