"""Builds the optional C accelerator of the record walk (wire/records/_scan.c). Everything else
is configured in pyproject.toml. The extension is optional: without a compiler the install
still succeeds and wire.records.scan uses its pure-Python walk."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("wire.records._scan", ["wire/records/_scan.c"], optional=True),
    ],
)
