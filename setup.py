"""The package list for setuptools; every other setting is in pyproject.toml.

Packages are discovered, so a new ``topogen.*`` subpackage ships without editing any
list. The top-level ``templates/`` folder (cluster presets, hardware catalogs and any
other template kind in a subfolder) is mapped into the wheel as ``topogen.templates``
(``package-dir`` in pyproject.toml) and read only through ``topogen/resources.py``.
pyproject.toml alone cannot combine discovery with a package mapped from another
folder, hence this file. Each template subfolder is listed as a (data-only) package,
so setuptools ships it without warnings.
"""

from setuptools import find_namespace_packages, find_packages, setup

TEMPLATE_DIRS = [f"topogen.templates.{p}" for p in find_namespace_packages(where="templates", exclude=["__pycache__", "*.__pycache__"])]

setup(packages=[*find_packages(include=["topogen", "topogen.*"]), "topogen.templates", *TEMPLATE_DIRS])
