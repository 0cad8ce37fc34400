"""Builds shmemcache._core against the shmemcache C library. Where the library comes from, first match wins:

  SHMEMCACHE_PREFIX=/opt/shmemcache      an install prefix (cmake --install build --prefix ...)
  SHMEMCACHE_BUILD_DIR=/path/to/build    an uninstalled CMake build tree (its source tree gives the headers)
  pkg-config shmemcache                  the installed package (set PKG_CONFIG_PATH for a non-system prefix)

The extension records the library's directory as its RUNPATH unless it is a system directory, so importing needs
no LD_LIBRARY_PATH. Everything else is in pyproject.toml.
"""
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SYSTEM_LIBDIRS = {"/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}


def fail(message):
    sys.exit("shmemcache: " + message)


def libdir_under(root):
    """The directory under root holding libshmemcache.so."""
    for candidate in [root, *sorted(root.glob("lib*")), *sorted(root.glob("lib*/*-linux-gnu"))]:
        if (candidate / "libshmemcache.so").exists():
            return candidate
    fail(f"no libshmemcache.so under {root}")


def from_prefix(prefix):
    prefix = Path(prefix).resolve()
    include = prefix / "include"
    if not (include / "shmemcache" / "shmemcache.h").exists():
        fail(f"SHMEMCACHE_PREFIX={prefix}: no include/shmemcache/shmemcache.h there")
    return [str(include)], [str(libdir_under(prefix))]


def from_build_tree(build):
    build = Path(build).resolve()
    cache = build / "CMakeCache.txt"
    if not cache.exists():
        fail(f"SHMEMCACHE_BUILD_DIR={build}: not a CMake build tree (no CMakeCache.txt)")
    source = re.search(r"^shmemcache_SOURCE_DIR:STATIC=(.*)$", cache.read_text(), re.M)
    if source is None:
        fail(f"SHMEMCACHE_BUILD_DIR={build}: not a shmemcache build tree")
    return [str(Path(source.group(1)) / "include")], [str(libdir_under(build))]


def from_pkg_config():
    try:
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "shmemcache"], check=True, capture_output=True,
                               text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        fail("the shmemcache C library was not found: set SHMEMCACHE_PREFIX (an install prefix), "
             "SHMEMCACHE_BUILD_DIR (a build tree), or PKG_CONFIG_PATH so that `pkg-config shmemcache` finds it")
    words = shlex.split(flags)
    return [w[2:] for w in words if w.startswith("-I")], [w[2:] for w in words if w.startswith("-L")]


def locate():
    if os.environ.get("SHMEMCACHE_PREFIX"):
        return from_prefix(os.environ["SHMEMCACHE_PREFIX"])
    if os.environ.get("SHMEMCACHE_BUILD_DIR"):
        return from_build_tree(os.environ["SHMEMCACHE_BUILD_DIR"])
    return from_pkg_config()


def c_version(include_dirs):
    header = next((Path(d) / "shmemcache" / "shmemcache.h" for d in include_dirs
                   if (Path(d) / "shmemcache" / "shmemcache.h").exists()), None)
    if header is None:
        return "0.0.0"  # a system include directory: the compiler finds the header, the version is unknown here
    text = header.read_text()
    parts = [re.search(rf"#define SHMEMCACHE_VERSION_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(m.group(1) if m else "0" for m in parts)


class build_ext_always(build_ext):
    """Recompiles on every build. pip builds in the source tree (python/build/), and setuptools' up-to-date check
    sees only the extension's own sources: an extension built earlier against another library (another
    SHMEMCACHE_PREFIX, a build tree, an older shmemcache.h) would be reused, with that library's run path and
    struct layouts."""

    def finalize_options(self):
        super().finalize_options()
        self.force = True


include_dirs, library_dirs = locate()
runtime_dirs = [d for d in library_dirs if os.path.realpath(d) not in SYSTEM_LIBDIRS]
sources = sorted(str(p) for p in Path("ext").glob("*.c"))

setup(
    version=c_version(include_dirs),
    cmdclass={"build_ext": build_ext_always},
    ext_modules=[
        Extension(
            "shmemcache._core",
            sources=sources,
            include_dirs=include_dirs,
            library_dirs=library_dirs,
            runtime_library_dirs=runtime_dirs,
            libraries=["shmemcache"],
            extra_compile_args=["-std=c11", "-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers",
                                "-Wno-cast-function-type"],
            depends=["ext/core.h"],
        )
    ],
)
