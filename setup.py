"""The package list, found rather than listed (issue 31: a hand-kept list left ``renderer.doctor`` out of
the wheel), and a source file list without bytecode. Everything else is in pyproject.toml, which cannot
say either: ``packages.find`` cannot name the ``variants/`` folder ``renderer.variants``, and a
MANIFEST.in ``global-exclude *.pyc`` prints a warning wherever there is none to exclude (an unpacked
sdist)."""

import os

from setuptools import find_namespace_packages, setup
from setuptools.command.egg_info import egg_info, manifest_maker

# Every folder is a package (namespace packages included), so data folders such as renderer/data are
# shipped with their files; folders whose names are not identifiers (charts/v1.6.2) travel as data
# of the package above them.
SKIP = ["*.__pycache__", "*.__pycache__.*"]
PACKAGES = [*find_namespace_packages(include=["renderer", "renderer.*"], exclude=SKIP),
            "renderer.variants",
            *(f"renderer.variants.{name}" for name in find_namespace_packages("variants", exclude=SKIP))]


class SourceManifest(manifest_maker):
    def prune_file_list(self) -> None:
        super().prune_file_list()
        # A checkout that ran its tests holds __pycache__ folders under the grafted ones (MANIFEST.in).
        self.filelist.exclude_pattern(r"(^|/)__pycache__/", is_regex=True)


class SourceFiles(egg_info):
    def find_sources(self) -> None:  # setuptools' own, with the manifest above
        manifest = SourceManifest(self.distribution)
        manifest.ignore_egg_info_dir = self.ignore_egg_info_in_manifest
        manifest.manifest = os.path.join(self.egg_info, "SOURCES.txt")
        manifest.run()
        self.filelist = manifest.filelist


setup(packages=PACKAGES, cmdclass={"egg_info": SourceFiles})
